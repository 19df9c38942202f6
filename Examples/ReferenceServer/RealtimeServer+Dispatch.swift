import NIOCore
import NIOWebSocket
import SDK
import SDKTesting

extension RealtimeServer {
    /// Carries out the core's outputs: frames and closes go to each connection's writer, in
    /// order (under the lock, so every client sees a channel's messages in sequence order). A
    /// connection whose writer already holds more than the limit is a slow consumer: it is
    /// closed (4008) rather than queued for without bound.
    static func dispatch(_ outputs: [ServerCore.Output], in state: inout State, limits: ServerLimits) {
        let now = ContinuousClock.now
        // Consecutive frames for one connection go to its writer as one batch.
        var batchID: ServerCore.ConnectionID?
        var batch: [TransportFrame] = []
        func flushBatch() {
            guard let id = batchID else { return }
            state.connections[id]?.outbound.yield(.frames(batch, at: now))
            batchID = nil
            batch = []
        }
        for output in outputs {
            switch output {
            case .send(let id, let frame):
                guard var connection = state.connections[id], !connection.isClosing else { continue }
                let size = frame.byteCount
                guard connection.queuedBytes + size <= limits.maxQueuedBytes else {
                    flushBatch()
                    state.slowConsumerCloses += 1
                    closeSlowConsumer(id, in: &state)
                    continue
                }
                connection.queuedBytes += size
                state.framesSent += 1
                state.peakQueuedBytes = max(state.peakQueuedBytes, connection.queuedBytes)
                state.connections[id] = connection
                if batchID != id { flushBatch() }
                batchID = id
                batch.append(frame)
            case .close(let id, let code, let reason):
                flushBatch()
                close(id, code: code, reason: reason, in: &state)
            }
        }
        flushBatch()
    }

    /// An orderly close: the close frame follows what is queued; the socket goes at the latest
    /// two seconds later, whether or not the client answered (or read anything).
    static func close(_ id: ServerCore.ConnectionID, code: CloseCode, reason: String, in state: inout State) {
        guard var connection = state.connections[id], !connection.isClosing else { return }
        connection.isClosing = true
        state.connections[id] = connection
        connection.outbound.yield(.close(code, reason: reason))
        let channel = connection.channel
        channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
    }

    /// A reader too far behind: what is queued for it is dropped (its writer ends), a close
    /// frame 4008 goes out if the socket still takes one, and the socket goes. The client
    /// catches up by sequence on its next connection.
    static func closeSlowConsumer(_ id: ServerCore.ConnectionID, in state: inout State) {
        guard var connection = state.connections[id], !connection.isClosing else { return }
        connection.isClosing = true
        state.connections[id] = connection
        connection.outbound.finish()
        let channel = connection.channel
        WebSocketFrameRules.fail(channel, code: WebSocketErrorCode(codeNumber: Int(CloseCode.slowConsumer.rawValue)), reason: "slow consumer")
        channel.eventLoop.scheduleTask(in: .milliseconds(500)) { channel.close(promise: nil) }
    }
}

import NIOCore
import SDK
import SDKTesting
import NIOWebSocket

extension RealtimeServer {
    /// Serves one WebSocket: a reader feeding the core, and a writer draining this
    /// connection's outbound queue (delayed by the fault's latency, silent while frozen).
    func serve(_ channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>) async {
        let (queue, continuation) = AsyncStream<Outbound>.makeStream()
        let (id, opened): (ServerCore.ConnectionID, [OneShot]) = state.withLock { state in
            state.nextID += 1
            state.acceptedTotal += 1
            state.connections[state.nextID] = Connection(channel: channel.channel, outbound: continuation)
            state.core.connectionOpened(state.nextID)
            return (state.nextID, state.readyWaiters())
        }
        for signal in opened { signal.fire() }
        defer {
            let closed = state.withLock { state in
                state.core.connectionClosed(id)
                state.connections[id] = nil
                return state.readyWaiters()
            }
            for signal in closed { signal.fire() }
        }
        let underlying = channel.channel
        try? await channel.executeThenClose { inbound, outbound in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await item in queue {
                        let (delay, frozen) = self.state.withLock { ($0.faults.frameDelay, $0.faults.freeze) }
                        switch item {
                        case .frame(let frame, let at):
                            if delay > .zero { try? await Task.sleep(until: at + delay, clock: .continuous) }
                            if frozen { continue }
                            try await outbound.write(Self.webSocketFrame(frame))
                        case .close(let code, let reason):
                            var data = ByteBuffer()
                            data.write(webSocketErrorCode: WebSocketErrorCode(codeNumber: Int(code.rawValue)))
                            data.writeString(reason)
                            try? await outbound.write(WebSocketFrame(fin: true, opcode: .connectionClose, data: data))
                            // Give the client a moment to answer, then let the socket go.
                            underlying.eventLoop.scheduleTask(in: .seconds(1)) { underlying.close(promise: nil) }
                            return
                        }
                    }
                }
                defer { continuation.finish() }
                for try await frame in inbound {
                    let frozen = state.withLock { $0.faults.freeze }
                    if frozen { continue }
                    switch frame.opcode {
                    case .text, .binary:
                        let payload: TransportFrame =
                            frame.opcode == .text ? .text(String(buffer: frame.unmaskedData)) : .binary(Array(buffer: frame.unmaskedData))
                        state.withLock { state in
                            let outputs = state.core.received(payload, from: id)
                            Self.dispatch(outputs, in: &state)
                        }
                    case .ping:
                        try await outbound.write(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData))
                    case .connectionClose:
                        var data = frame.unmaskedData
                        var reply = ByteBuffer()
                        if let code = data.readWebSocketErrorCode() { reply.write(webSocketErrorCode: code) }
                        try? await outbound.write(WebSocketFrame(fin: true, opcode: .connectionClose, data: reply))
                        continuation.finish()
                        group.cancelAll()
                        return
                    default:
                        break
                    }
                }
                continuation.finish()
                group.cancelAll()
            }
        }
    }

    static func webSocketFrame(_ frame: TransportFrame) -> WebSocketFrame {
        switch frame {
        case .text(let text): WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: text))
        case .binary(let bytes): WebSocketFrame(fin: true, opcode: .binary, data: ByteBuffer(bytes: bytes))
        }
    }
}

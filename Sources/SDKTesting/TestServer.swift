public import SDK

/// An in-memory realtime server that speaks the protocol (``ServerCore``), for host apps' tests.
/// Connect sessions to it with ``transport()``. It answers at once, in order, with no clock;
/// faults are switches a test flips: refuse connections, reject credentials, freeze, drop
/// every connection.
public final class TestServer: Sendable {
    struct State {
        var core: ServerCore
        var connections: [ServerCore.ConnectionID: AsyncStream<TransportEvent>.Continuation] = [:]
        var nextID: ServerCore.ConnectionID = 0
        var received: [ClientMessage] = []
        var acceptedTotal = 0
        var isRefusing = false
        var isFrozen = false
        var losesNextPublishAck = false
        var connectionWaiters = CountWaiters(.exactly)
        var messageWaiters = CountWaiters(.atLeast)
    }

    let state: Locked<State>

    /// - Parameters:
    ///   - tokens: accepted tokens; `nil` accepts any.
    ///   - retention: messages kept per channel for catch-up.
    ///   - codec: the server's limits (tighter ones than the client's show what a stricter
    ///     server answers).
    public init(tokens: Set<String>? = nil, retention: Int = 1000, codec: JSONWireCodec = JSONWireCodec()) {
        state = Locked(State(core: ServerCore(.init(tokens: tokens, retention: retention, codec: codec))))
    }

    /// A transport whose connections reach this server. It refuses a second concurrent socket.
    public func transport() -> InMemoryTransport {
        InMemoryTransport(server: self)
    }

    // MARK: What a test sees

    /// Every message clients sent, in order (tokens stay redacted in descriptions).
    public var receivedMessages: [ClientMessage] { state.withLock { $0.received } }

    /// Connections open now.
    public var openConnectionCount: Int { state.withLock { $0.connections.count } }

    /// Connections accepted since the server started.
    public var acceptedConnectionCount: Int { state.withLock { $0.acceptedTotal } }

    /// The latest sequence number of `channel`.
    public func latestSequence(of channel: String) -> UInt64 { state.withLock { $0.core.latestSequence(of: channel) } }

    /// The number of connections subscribed to `channel`.
    public func subscriberCount(of channel: String) -> Int { state.withLock { $0.core.subscriberCount(of: channel) } }

    /// Returns once exactly `count` connections are open (at once if they are already).
    public func waitForOpenConnections(_ count: Int) async {
        let signal = state.withLock { $0.connectionWaiters.register(target: count, count: $0.connections.count) }
        await signal?.wait()
    }

    /// Returns once clients have sent at least `count` messages in all.
    public func waitForReceivedMessages(_ count: Int) async {
        let signal = state.withLock { $0.messageWaiters.register(target: count, count: $0.received.count) }
        await signal?.wait()
    }

    // MARK: What a test does

    /// Publishes on `channel` from the server side; returns the sequence number. Data the
    /// protocol cannot carry (too large, too deep, NaN) is refused before it gets a number.
    @discardableResult
    public func publish(_ data: JSONValue, to channel: String) throws(CodecError) -> UInt64 {
        let result: Result<(UInt64, [ServerCore.Output]), CodecError> = state.withLock { state in
            do throws(CodecError) {
                return .success(try state.core.publish(data, to: channel))
            } catch {
                return .failure(error)
            }
        }
        let (sequence, outputs) = try result.get()
        perform(outputs)
        return sequence
    }

    /// Refuses new connections while set.
    public func setRefusingConnections(_ refusing: Bool) { state.withLock { $0.isRefusing = refusing } }

    /// Rejects every credential while set (close code 4001).
    public func setRejectingCredentials(_ rejecting: Bool) { state.withLock { $0.core.rejectsAllCredentials = rejecting } }

    /// Refuses subscriptions to `channels` (error `forbidden`) while set.
    public func setRejectingSubscriptions(to channels: Set<String>) { state.withLock { $0.core.rejectedChannels = channels } }

    /// The next publish is applied (numbered, delivered, remembered by its key) and then its
    /// connection drops before the acknowledgement leaves: the case exactly-once publishing is
    /// for.
    public func loseNextPublishAcknowledgement() { state.withLock { $0.losesNextPublishAck = true } }

    /// While set, frames are accepted and never answered (a half-open connection).
    public func setFrozen(_ frozen: Bool) { state.withLock { $0.isFrozen = frozen } }

    /// Sends a raw frame to every open connection (for instance, garbage a hostile server sends).
    public func sendToAll(_ frame: TransportFrame) {
        let continuations = state.withLock { Array($0.connections.values) }
        for continuation in continuations { continuation.yield(.frame(frame)) }
    }

    /// Closes every connection with `code` (without a close frame when `code` is `nil`).
    public func dropAllConnections(code: CloseCode? = .goingAway, reason: String = "dropped by test") {
        let dropped = state.withLock { state in
            defer { state.connections = [:] }
            for id in state.connections.keys { state.core.connectionClosed(id) }
            return Array(state.connections.values)
        }
        for continuation in dropped {
            continuation.yield(.closed(code: code, reason: reason))
            continuation.finish()
        }
        notifyConnectionWaiters()
    }

    // MARK: Connections

    func accept(_ continuation: AsyncStream<TransportEvent>.Continuation) throws -> ServerCore.ConnectionID {
        let id: ServerCore.ConnectionID? = state.withLock { state in
            guard !state.isRefusing else { return nil }
            state.nextID += 1
            state.acceptedTotal += 1
            state.connections[state.nextID] = continuation
            state.core.connectionOpened(state.nextID)
            return state.nextID
        }
        guard let id else { throw TransportError(.connectionFailed, "connection refused by the test server") }
        notifyConnectionWaiters()
        return id
    }

    func received(_ frame: TransportFrame, from id: ServerCore.ConnectionID) {
        let (outputs, ready): ([ServerCore.Output], [OneShot]) = state.withLock { state in
            guard state.connections[id] != nil else { return ([], []) }
            if let message = try? state.core.configuration.codec.decodeClientMessage(frame) { state.received.append(message) }
            let ready = state.messageWaiters.ready(count: state.received.count)
            guard !state.isFrozen else { return ([], ready) }
            var outputs = state.core.received(frame, from: id)
            if state.losesNextPublishAck, case .publish? = state.received.last {
                state.losesNextPublishAck = false
                outputs = outputs.filter { if case .send(id, _) = $0 { false } else { true } }
                outputs.append(.close(id, .goingAway, reason: "dropped before the acknowledgement"))
            }
            return (outputs, ready)
        }
        perform(outputs)
        for signal in ready { signal.fire() }
    }

    func clientClosed(_ id: ServerCore.ConnectionID) {
        let continuation = state.withLock { state in
            state.core.connectionClosed(id)
            return state.connections.removeValue(forKey: id)
        }
        continuation?.finish()
        notifyConnectionWaiters()
    }

    private func perform(_ outputs: [ServerCore.Output]) {
        var closed = false
        for output in outputs {
            switch output {
            case .send(let id, let frame):
                let continuation = state.withLock { $0.connections[id] }
                continuation?.yield(.frame(frame))
            case .close(let id, let code, let reason):
                let continuation = state.withLock { state in
                    state.core.connectionClosed(id)
                    return state.connections.removeValue(forKey: id)
                }
                continuation?.yield(.closed(code: code, reason: reason))
                continuation?.finish()
                closed = true
            }
        }
        if closed { notifyConnectionWaiters() }
    }

    private func notifyConnectionWaiters() {
        let ready = state.withLock { $0.connectionWaiters.ready(count: $0.connections.count) }
        for signal in ready { signal.fire() }
    }
}

/// Holds the current status and hands every change to any number of subscribers, each with
/// its own unbounded stream (status changes are few; none is dropped).
final class StatusBroadcaster: Sendable {
    private struct State {
        var status: ConnectionStatus
        var subscribers: [UInt64: AsyncStream<ConnectionStatus>.Continuation] = [:]
        var nextID: UInt64 = 0
        var finished = false
    }

    private let state: Locked<State>

    init(_ initial: ConnectionStatus) {
        state = Locked(State(status: initial))
    }

    var current: ConnectionStatus { state.withLock { $0.status } }

    /// A stream that starts with the current status and then yields each change.
    func updates() -> AsyncStream<ConnectionStatus> {
        let (stream, continuation) = AsyncStream<ConnectionStatus>.makeStream()
        let id: UInt64? = state.withLock { state in
            continuation.yield(state.status)
            guard !state.finished else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Sets the status; returns false (and tells nobody) when it did not change.
    @discardableResult
    func set(_ status: ConnectionStatus) -> Bool {
        state.withLock { state in
            guard state.status != status else { return false }
            state.status = status
            // Yielding under the lock keeps every subscriber's order the same as the changes'.
            for continuation in state.subscribers.values { continuation.yield(status) }
            return true
        }
    }

    /// Ends every stream (the session is over).
    func finish() {
        let subscribers = state.withLock { state in
            state.finished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for continuation in subscribers { continuation.finish() }
    }
}

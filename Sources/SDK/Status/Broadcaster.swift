/// Holds the latest value and hands every new one to any number of subscribers, each with its
/// own unbounded stream (statuses and recovery reports are few; none is dropped).
final class Broadcaster<Element: Sendable & Equatable>: Sendable {
    private struct State {
        var current: Element?
        var subscribers: [UInt64: AsyncStream<Element>.Continuation] = [:]
        var nextID: UInt64 = 0
        var finished = false
    }

    private let state: Locked<State>

    init(_ initial: Element?) {
        state = Locked(State(current: initial))
    }

    var current: Element? { state.withLock { $0.current } }

    /// A stream of every new value, starting with the current one when `replayingCurrent`.
    func updates(replayingCurrent: Bool) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream()
        let id: UInt64? = state.withLock { state in
            if replayingCurrent, let current = state.current { continuation.yield(current) }
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

    /// Publishes `value`; with `onlyIfChanged`, a value equal to the current one is not
    /// published (and false is returned).
    @discardableResult
    func set(_ value: Element, onlyIfChanged: Bool = true) -> Bool {
        state.withLock { state in
            if onlyIfChanged, state.current == value { return false }
            state.current = value
            // Yielding under the lock keeps every subscriber's order the same as the values'.
            for continuation in state.subscribers.values { continuation.yield(value) }
            return true
        }
    }

    /// Ends every stream.
    func finish() {
        let subscribers = state.withLock { state in
            state.finished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for continuation in subscribers { continuation.finish() }
    }
}

/// Holds the latest value and hands every new one to any number of subscribers, each with its
/// own unbounded stream (statuses and recovery reports are few; none is dropped).
final class Broadcaster<Element: Sendable & Equatable>: Sendable {
    private struct State {
        var current: Element?
        var subscribers: [UInt64: AsyncStream<Element>.Continuation] = [:]
        var nextID: UInt64 = 0
        var finished = false
        /// How many values were published (the initial one counts as 0).
        var version: UInt64 = 0
    }

    private let state: Locked<State>

    init(_ initial: Element?) {
        state = Locked(State(current: initial))
    }

    var current: Element? { state.withLock { $0.current } }

    /// How many values were published so far: the current value's version.
    var version: UInt64 { state.withLock { $0.version } }

    /// ``updates(replayingCurrent:)`` with the version of the stream's first value: values are
    /// published with consecutive versions, so a reader can tell which ones came after a moment
    /// it noted ``version``.
    func versionedUpdates(replayingCurrent: Bool) -> (stream: AsyncStream<Element>, firstVersion: UInt64) {
        state.withLock { state in
            // Taken under the lock, so no value is published between this and the subscription.
            let first = replayingCurrent && state.current != nil ? state.version : state.version + 1
            return (updatesLocked(&state, replayingCurrent: replayingCurrent), first)
        }
    }

    /// A stream of every new value, starting with the current one when `replayingCurrent`.
    func updates(replayingCurrent: Bool) -> AsyncStream<Element> {
        state.withLock { updatesLocked(&$0, replayingCurrent: replayingCurrent) }
    }

    private func updatesLocked(_ state: inout State, replayingCurrent: Bool) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream()
        if replayingCurrent, let current = state.current { continuation.yield(current) }
        guard !state.finished else {
            continuation.finish()
            return stream
        }
        let id = state.nextID
        state.nextID += 1
        state.subscribers[id] = continuation
        // Runs when the stream ends: never while this lock is held by `updates` itself (the
        // stream is returned unended), so taking the lock here cannot deadlock.
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
            state.version += 1
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

/// A run loop's funnel entrance (a session's or a connection controller's): every input, from
/// any task, goes in here. With a tracking clock each input queued is one unit of work, ended
/// once the run loop has handled it (``handled()``), so a test clock's `settle()` returns only
/// after the loop has handled what was queued — a timer's fire included.
struct TrackedInputSink<Input: Sendable>: Sendable {
    let continuation: AsyncStream<Input>.Continuation
    let activity: (any ActivityTracking)?
    /// Inputs queued and not handled yet (kept only with a tracker): what a session that
    /// goes away unrun leaves to end.
    private let pending: Locked<Int>?

    init(continuation: AsyncStream<Input>.Continuation, activity: (any ActivityTracking)?) {
        self.continuation = continuation
        self.activity = activity
        self.pending = activity == nil ? nil : Locked(0)
    }

    @discardableResult
    func yield(_ input: Input) -> AsyncStream<Input>.Continuation.YieldResult {
        guard let activity, let pending else { return continuation.yield(input) }
        activity.begin()
        pending.withLock { $0 += 1 }
        let result = continuation.yield(input)
        if case .enqueued = result {} else { handled() }
        return result
    }

    /// The run loop handled one input.
    func handled() {
        guard let activity, let pending else { return }
        pending.withLock { $0 -= 1 }
        activity.end()
    }

    /// Nothing will handle what is queued (the session goes away without running).
    func abandon() {
        guard let activity, let pending else { return }
        let left = pending.withLock { count in
            defer { count = 0 }
            return count
        }
        for _ in 0..<left { activity.end() }
    }

    func finish() { continuation.finish() }
}


extension Session {
    /// The funnel's entrance: every input, from any task, goes in here.
    typealias InputSink = TrackedInputSink<Input>

    /// The way to the writer task: each frame or close queued is one unit of work, ended once
    /// the writer has sent it.
    struct OutboundSink: Sendable {
        let continuation: AsyncStream<Outbound>.Continuation
        let activity: (any ActivityTracking)?

        func yield(_ item: Outbound) {
            activity?.begin()
            if case .enqueued = continuation.yield(item) {} else { activity?.end() }
        }

        func finish() { continuation.finish() }
    }
}

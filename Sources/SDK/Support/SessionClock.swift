/// The session's view of an injected `any Clock<Duration>`: deadlines are computed when a
/// timer is armed, so a timer whose sleeper starts late still fires at the right instant (a
/// test clock advanced in between wakes it at once).
struct SessionClock: Sendable {
    /// An instant of the wrapped clock.
    struct Instant: Sendable {
        fileprivate let value: any InstantProtocol<Duration>
    }

    private let nowBody: @Sendable () -> Instant
    private let sleepBody: @Sendable (Instant) async throws -> Void

    init(_ clock: any Clock<Duration>) {
        self = Self.make(clock)
    }

    private init(now: @escaping @Sendable () -> Instant, sleep: @escaping @Sendable (Instant) async throws -> Void) {
        self.nowBody = now
        self.sleepBody = sleep
    }

    private static func make<C: Clock<Duration>>(_ clock: C) -> SessionClock {
        SessionClock(
            now: { Instant(value: clock.now) },
            sleep: { deadline in
                // Only this clock makes instants of this SessionClock, so the cast holds.
                try await clock.sleep(until: deadline.value as! C.Instant, tolerance: nil)
            }
        )
    }

    var now: Instant { nowBody() }

    func deadline(after delay: Duration) -> Instant {
        Instant(value: now.value.advanced(by: delay))
    }

    func sleep(until deadline: Instant) async throws {
        try await sleepBody(deadline)
    }

    /// The time from now to `deadline` (negative once it has passed).
    func remaining(until deadline: Instant) -> Duration {
        .zero - elapsed(since: deadline)
    }

    /// The time from `start` to now.
    func elapsed(since start: Instant) -> Duration {
        Self.duration(from: start.value, to: now.value)
    }

    private static func duration<I: InstantProtocol<Duration>>(from start: I, to end: any InstantProtocol<Duration>) -> Duration {
        guard let end = end as? I else { return .zero }
        return start.duration(to: end)
    }
}

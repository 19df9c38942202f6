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
    private let trackedSleepBody: (@Sendable (Instant) async throws -> Void)?
    /// The clock's activity tracker, when it has one (a test clock that runs until idle).
    let activity: (any ActivityTracking)?

    init(_ clock: any Clock<Duration>) {
        self = Self.make(clock)
    }

    private init(
        now: @escaping @Sendable () -> Instant, sleep: @escaping @Sendable (Instant) async throws -> Void,
        trackedSleep: (@Sendable (Instant) async throws -> Void)? = nil, activity: (any ActivityTracking)? = nil
    ) {
        self.nowBody = now
        self.sleepBody = sleep
        self.trackedSleepBody = trackedSleep
        self.activity = activity
    }

    private static func make<C: Clock<Duration>>(_ clock: C) -> SessionClock {
        if let tracking = clock as? any ActivityTrackingClock {
            return makeTracking(tracking)
        }
        return SessionClock(
            now: { Instant(value: clock.now) },
            sleep: { deadline in
                // Only this clock makes instants of this SessionClock, so the cast holds.
                try await clock.sleep(until: deadline.value as! C.Instant, tolerance: nil)
            }
        )
    }

    private static func makeTracking<C: ActivityTrackingClock>(_ clock: C) -> SessionClock {
        SessionClock(
            now: { Instant(value: clock.now) },
            sleep: { deadline in try await clock.sleep(until: deadline.value as! C.Instant, tolerance: nil) },
            trackedSleep: { deadline in try await clock.sleepTracked(until: deadline.value as! C.Instant) },
            activity: clock.activity
        )
    }

    var now: Instant { nowBody() }

    func deadline(after delay: Duration) -> Instant {
        Instant(value: now.value.advanced(by: delay))
    }

    func sleep(until deadline: Instant) async throws {
        try await sleepBody(deadline)
    }

    /// Sleeps as a unit of tracked work that is not work while it sleeps (``activity``); a
    /// plain sleep on a clock that tracks nothing.
    func sleepTracked(until deadline: Instant) async throws {
        try await (trackedSleepBody ?? sleepBody)(deadline)
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

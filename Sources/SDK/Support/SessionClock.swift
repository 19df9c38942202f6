/// The session's view of an injected `any Clock<Duration>`: deadlines are computed when a
/// timer is armed, so a timer whose sleeper starts late still fires at the right instant (a
/// test clock advanced in between wakes it at once).
///
/// An instant is held as its offset from the clock's instant when this view was made: comparing
/// and measuring instants is arithmetic on durations, with no existential instant to box and
/// cast back (a request's deadline is computed and compared for every request sent).
struct SessionClock: Sendable {
    /// An instant of the wrapped clock, as this view counts it: compare and pass instants only to
    /// the view that made them (each view has its own origin; the session and the connection
    /// controller each keep theirs).
    struct Instant: Sendable, Comparable {
        fileprivate let offset: Duration

        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
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
        let origin = clock.now
        return SessionClock(
            now: { Instant(offset: origin.duration(to: clock.now)) },
            sleep: { deadline in try await clock.sleep(until: origin.advanced(by: deadline.offset), tolerance: nil) }
        )
    }

    private static func makeTracking<C: ActivityTrackingClock>(_ clock: C) -> SessionClock {
        let origin = clock.now
        return SessionClock(
            now: { Instant(offset: origin.duration(to: clock.now)) },
            sleep: { deadline in try await clock.sleep(until: origin.advanced(by: deadline.offset), tolerance: nil) },
            trackedSleep: { deadline in try await clock.sleepTracked(until: origin.advanced(by: deadline.offset)) },
            activity: clock.activity
        )
    }

    var now: Instant { nowBody() }

    func deadline(after delay: Duration) -> Instant {
        now.advanced(by: delay)
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
        now.offset - start.offset
    }
}

extension SessionClock.Instant {
    /// The instant `delay` after this one.
    func advanced(by delay: Duration) -> Self { Self(offset: offset + delay) }
}

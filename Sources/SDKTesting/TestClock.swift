package import SDK

/// A clock that moves only when a test advances it: no sleeps, no timing flakiness.
///
/// ``advance(by:)`` means "this much time has passed, and everything due by then has happened,
/// with its consequences": it settles, then moves to each deadline within the span in turn —
/// including timers armed on the way, such as a retry after a backoff and then its connect
/// timeout — settling after each, and ends at the span's end, settled. So the natural way to
/// write a boundary is also the strict one:
///
/// ```swift
/// import SDK
/// import SDKTesting
/// import Testing
///
/// @Test func watchdogAtThirtySeconds() async throws {
///     let clock = TestClock(), lifecycle = LifecycleDriver()
///     let session = Session(settings: try .testing(auto: false), transport: TestServer().transport(), clock: clock, lifecycle: lifecycle)
///     try await withRunningSession(session) { _ in
///         try await session.connect()
///         await lifecycle.background()
///         await clock.advance(by: .milliseconds(29_999))
///         #expect(session.status == .connected)        // fails if the watchdog fired early
///         await clock.advance(by: .milliseconds(1))
///         #expect(session.status == .disconnected(.watchdogExpired))
///     }
/// }
/// ```
///
/// The clock knows when the sessions and connection controllers on it (and the ``TestServer``
/// connections they opened) have nothing left to do but wait for it: ``settle()`` waits for
/// that, and ``runUntilIdle(limit:)`` runs until nothing is scheduled, so a test can say
/// "nothing more will ever happen". (A session counts its queued inputs, the frames on their
/// way out, its tasks between two waits and the in-memory server's events not yet read; a timer
/// asleep on this clock is not work. An app's recovery step that sleeps on this clock keeps its
/// session busy: advance with ``advanceWithoutSettling(by:)`` for it.)
public final class TestClock: Clock, Sendable {
    public struct Instant: InstantProtocol, CustomStringConvertible {
        /// The time since the clock started.
        public var offset: Duration

        /// The instant `offset` after the clock's start.
        public init(offset: Duration) { self.offset = offset }

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        public var description: String { "t+\(offset)" }
    }

    /// How ``runUntilIdle(limit:)`` ended.
    ///
    /// A later release may add an outcome, so a `switch` over it needs a `default`.
    public enum IdleOutcome: Hashable, Sendable, CustomStringConvertible {
        /// Nothing is running and nothing is scheduled: nothing more will happen.
        case idle
        /// Something is still scheduled after the limit (a heartbeat, a watchdog), at this
        /// instant.
        case stillScheduled(Instant)

        public var description: String {
            switch self {
            case .idle: "idle"
            case .stillScheduled(let next): "still scheduled at \(next)"
            }
        }
    }

    private let state = Locked(TestClockState())
    private let tracker: Tracker

    /// A clock at its start, which moves only when a test moves it.
    public init() {
        tracker = Tracker(state)
    }

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .zero }

    /// How many sleeps are waiting.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// How many sleepers the clock has woken (its deadline came), in all.
    public var wakeUps: Int { state.withLock { $0.wakeUps } }

    /// The earliest deadline a sleeper waits for.
    public var nextDeadline: Instant? { state.withLock { $0.sleepers.values.map(\.deadline).min() } }

    /// Units of work the sessions on this clock have in hand now (0: they only wait).
    public var activeWork: Int { state.withLock { $0.activity } }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await sleep(until: deadline, tracked: false)
    }

    private func sleep(until deadline: Instant, tracked: Bool) async throws {
        try Task.checkCancellation()
        let id: UInt64? = state.withLock { state in
            guard deadline > state.now else {
                state.wakeUps += 1
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (resume, idle): (Result<Void, any Error>?, [OneShot]) = state.withLock { state in
                    if Task.isCancelled { return (.failure(CancellationError()), []) }
                    if deadline <= state.now {
                        state.wakeUps += 1
                        return (.success(()), [])
                    }
                    state.sleepers[id] = TestClockSleeper(deadline: deadline, tracked: tracked, continuation: continuation)
                    // Asleep, a session's timer is not work.
                    return (nil, tracked ? state.endWork() : [])
                }
                for waiter in idle { waiter.fire() }
                if let resume { continuation.resume(with: resume) }
            }
        } onCancel: {
            let sleeper: TestClockSleeper? = state.withLock { state in
                let sleeper = state.sleepers.removeValue(forKey: id)
                if sleeper?.tracked == true { state.activity += 1 }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward by `duration` the way it would pass, and returns once everything due
    /// by then has happened, with its consequences: it settles, then advances to each deadline
    /// that comes within the span in turn — including timers armed on the way — settling after
    /// each, and ends at the span's end, settled. A timer that fires early is therefore handled
    /// before a check made after an advance that stops short of its due time.
    public func advance(by duration: Duration) async {
        await advance(to: now.advanced(by: duration))
    }

    /// Moves time to `instant` (never backward) as ``advance(by:)`` does: every deadline up to
    /// it fires in turn, and it returns settled.
    public func advance(to instant: Instant) async {
        await settle()
        while let next = nextDeadline, next <= instant {
            await jump(to: next)
            await settle()
        }
        await jump(to: instant)
        await settle()
    }

    /// The same as ``advance(by:)``, which settles too.
    @available(*, deprecated, renamed: "advance(by:)", message: "advance(by:) now settles and fires the timers armed on the way")
    public func advance(through duration: Duration) async {
        await advance(by: duration)
    }

    /// Moves time forward by `duration` and wakes every sleeper due by then, without waiting for
    /// anything to handle the wake-ups: a check made right after it can run before a timer's
    /// fire is handled, so it proves nothing about "not yet". Only for work that sleeps on this
    /// clock inside a session's own unit of work (an app's recovery step that sleeps), where
    /// ``advance(by:)`` would wait for that work, and so for itself.
    public func advanceWithoutSettling(by duration: Duration) async {
        await jump(to: now.advanced(by: duration))
    }

    /// Sets the time to `instant` (never backward), wakes every sleeper whose deadline has come,
    /// earliest first, and yields once.
    private func jump(to instant: Instant) async {
        let due: [TestClockSleeper] = state.withLock { state in
            if instant > state.now { state.now = instant }
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for id in due.keys { state.sleepers[id] = nil }
            state.wakeUps += due.count
            state.activity += due.values.count { $0.tracked }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        for sleeper in due { sleeper.continuation.resume() }
        await Task.yield()
    }

    /// Returns once the sessions on this clock have nothing left to do but wait (for the clock,
    /// the app or a real peer): every input handled, every frame written, every event read.
    public func settle() async {
        let waiter: OneShot? = state.withLock { state in
            guard state.activity > 0 else { return nil }
            let waiter = OneShot()
            state.idleWaiters.append(waiter)
            return waiter
        }
        await waiter?.wait()
    }

    /// Runs until nothing is running and nothing is scheduled — firing each deadline in turn,
    /// settling after each — or until the next deadline lies beyond `limit` from now (a
    /// heartbeat, a watchdog: something that would go on forever). Returns which.
    @discardableResult
    public func runUntilIdle(limit: Duration = .seconds(24 * 3600)) async -> IdleOutcome {
        let end = now.advanced(by: limit)
        await settle()
        while let next = nextDeadline {
            guard next <= end else { return .stillScheduled(next) }
            await jump(to: next)
            await settle()
        }
        return .idle
    }

    // MARK: Tracking

    fileprivate func sleepTrackedImpl(until deadline: Instant) async throws {
        try await sleep(until: deadline, tracked: true)
    }
}

extension TestClock: ActivityTrackingClock {
    package var activity: any ActivityTracking { tracker }

    package func sleepTracked(until deadline: Instant) async throws {
        try await sleepTrackedImpl(until: deadline)
    }
}

/// The clock's activity count as the sessions see it: the clock's own state, so a sleeper's
/// registration and the end of its unit of work happen under one lock.
private final class Tracker: ActivityTracking {
    let state: Locked<TestClockState>

    init(_ state: Locked<TestClockState>) { self.state = state }

    func begin() { state.withLock { $0.activity += 1 } }

    func end() {
        let idle = state.withLock { $0.endWork() }
        for waiter in idle { waiter.fire() }
    }
}

fileprivate struct TestClockSleeper {
    let deadline: TestClock.Instant
    /// A session's timer: its wake-up begins a unit of work.
    let tracked: Bool
    let continuation: CheckedContinuation<Void, any Error>
}

fileprivate struct TestClockState {
    var now = TestClock.Instant(offset: .zero)
    var sleepers: [UInt64: TestClockSleeper] = [:]
    var nextID: UInt64 = 0
    var wakeUps = 0
    /// Units of tracked work in hand.
    var activity = 0
    var idleWaiters: [OneShot] = []
}

extension TestClockState {
    /// Ends one unit of work; returns the idle waiters to fire when none is left.
    mutating func endWork() -> [OneShot] {
        activity -= 1
        precondition(activity >= 0, "TestClock: more work ended than begun")
        guard activity == 0 else { return [] }
        defer { idleWaiters = [] }
        return idleWaiters
    }
}

public import ConnectionPolicy
public import SDK

/// A `ManagedConnection` for tests of a `ConnectionController`: it opens at once unless told
/// otherwise (``script(_:)``: fail, hang until cancelled, hang past cancellation), counts every
/// open and close, and lets a test drop the connection (``drop(_:disposition:)``) or report on an attempt
/// the way a misbehaving client would (``report(lost:on:)``, ``openLate(_:)``). Waits are
/// signals, never polls.
///
/// ```swift
/// @Test func wrappedClientDisconnectsInTheBackground() async throws {
///     let (client, lifecycle) = (TestConnection(), LifecycleDriver())
///     let controller = ConnectionController(connection: client, policy: AutoPolicy(), clock: TestClock(), lifecycle: lifecycle)
///     try await withRunningController(controller) { status in
///         try await status.waitFor(.connected)
///         await lifecycle.background()
///         #expect(controller.status == .disconnected(.appBackgrounded))
///     }
/// }
/// ```
public final class TestConnection: ManagedConnection {
    /// What an open does.
    ///
    /// An input you choose; a later release may add a behaviour, so a `switch` over it needs a `default`.
    public enum Behaviour: Sendable {
        /// Opens at once.
        case opens
        /// Fails with the error.
        case fails(any Error)
        /// Never opens; returns (throwing `CancellationError`) when its task is cancelled.
        case hangs
        /// Never opens, and does not return when cancelled either (until ``openLate(_:)``).
        case ignoresCancellation
    }

    private struct State {
        var script: [Behaviour] = []
        var attempts: [UInt64: ConnectionAttempt] = [:]
        var openCalls = 0
        var closeCalls = 0
        /// Attempts open now (opened and not closed).
        var open: Set<UInt64> = []
        var mostOpenAtOnce = 0
        /// Closes, of an attempt that was opened, naming an object other than the one its open
        /// was handed.
        var strangerCloses = 0
        var hanging: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        var openWaiters = CountWaiters(.atLeast)
        var closeWaiters = CountWaiters(.atLeast)
    }

    private let state = Locked(State())

    /// A connection that is open, with nothing sent or received yet.
    public init() {}

    /// What the next opens do, in order; after these, opens succeed.
    public func script(_ behaviours: Behaviour...) {
        state.withLock { $0.script += behaviours }
    }

    /// How many times ``open(_:)`` was called.
    public var openCalls: Int { state.withLock { $0.openCalls } }
    /// How many times ``close(_:)`` was called.
    public var closeCalls: Int { state.withLock { $0.closeCalls } }
    /// How many connections are open now.
    public var openCount: Int { state.withLock { $0.open.count } }
    /// The most connections open at the same time, ever.
    public var mostOpenAtOnce: Int { state.withLock { $0.mostOpenAtOnce } }
    /// How many closes of an attempt that was opened named an attempt object other than the one
    /// its open was handed (a client that keys its connections by the attempt would not find
    /// them). A close of an attempt whose open never reached the client is not counted: the
    /// controller closes attempts it gave up on before they opened (quick background/foreground
    /// cycles do), and that close is correct.
    public var strangerCloses: Int { state.withLock { $0.strangerCloses } }
    /// The attempt handed to the latest open.
    public var latestAttempt: ConnectionAttempt? { state.withLock { $0.attempts.max { $0.key < $1.key }?.value } }

    public func open(_ attempt: ConnectionAttempt) async throws {
        let behaviour: Behaviour = state.withLock { state in
            state.attempts[attempt.id] = attempt
            state.openCalls += 1
            return state.script.isEmpty ? .opens : state.script.removeFirst()
        }
        fire(state.withLock { $0.openWaiters.ready(count: $0.openCalls) })
        switch behaviour {
        case .opens:
            markOpen(attempt.id)
            attempt.opened()
        case .fails(let error):
            throw error
        case .hangs:
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let cancelled = state.withLock { state in
                        if Task.isCancelled { return true }
                        state.hanging[attempt.id] = continuation
                        return false
                    }
                    if cancelled { continuation.resume(throwing: CancellationError()) }
                }
            } onCancel: {
                state.withLock { $0.hanging.removeValue(forKey: attempt.id) }?.resume(throwing: CancellationError())
            }
        case .ignoresCancellation:
            break
        }
    }

    public func close(_ attempt: ConnectionAttempt) async {
        let waiters = state.withLock { state in
            state.closeCalls += 1
            if let opened = state.attempts[attempt.id], opened !== attempt { state.strangerCloses += 1 }
            state.open.remove(attempt.id)
            return state.closeWaiters.ready(count: state.closeCalls)
        }
        fire(waiters)
    }

    /// The server or the network drops the open connection: reports it lost with `reason`.
    public func drop(_ reason: DisconnectReason = .networkLost, disposition: RetryDisposition = .retry) {
        guard let attempt = state.withLock({ state in state.open.max().flatMap { state.attempts[$0] } }) else { return }
        state.withLock { _ = $0.open.remove(attempt.id) }
        attempt.lost(reason, disposition: disposition)
    }

    /// Reports `reason` on attempt `id` whatever its state (a client reporting twice, or late).
    public func report(lost reason: DisconnectReason, on id: UInt64) {
        state.withLock { $0.attempts[id] }?.lost(reason)
    }

    /// Attempt `id` opens now, whatever the controller did with it (a client that ignored the
    /// cancel and opened anyway).
    public func openLate(_ id: UInt64) {
        guard let attempt = state.withLock({ $0.attempts[id] }) else { return }
        markOpen(id)
        attempt.opened()
    }

    /// Waits until ``open(_:)`` was called at least `count` times; throws ``WaitTimeout`` after
    /// `patience` of real time without it.
    public func waitForOpenCalls(
        _ count: Int, patience: Duration = .seconds(10), file: StaticString = #fileID, line: UInt = #line
    ) async throws {
        let signal = state.withLock { $0.openWaiters.register(target: count, count: $0.openCalls) }
        try await waitWithPatience(
            signal, patience: patience, expected: "\(count) call(s) of open", found: { "\(state.withLock { $0.openCalls })" },
            file: file, line: line)
    }

    /// Waits until ``close(_:)`` was called at least `count` times; throws ``WaitTimeout`` after
    /// `patience` of real time without it.
    public func waitForCloseCalls(
        _ count: Int, patience: Duration = .seconds(10), file: StaticString = #fileID, line: UInt = #line
    ) async throws {
        let signal = state.withLock { $0.closeWaiters.register(target: count, count: $0.closeCalls) }
        try await waitWithPatience(
            signal, patience: patience, expected: "\(count) call(s) of close", found: { "\(state.withLock { $0.closeCalls })" },
            file: file, line: line)
    }

    private func markOpen(_ id: UInt64) {
        state.withLock { state in
            state.open.insert(id)
            state.mostOpenAtOnce = max(state.mostOpenAtOnce, state.open.count)
        }
    }

    private func fire(_ signals: [OneShot]) {
        for signal in signals { signal.fire() }
    }
}

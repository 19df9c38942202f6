import ConnectionPolicy

extension ConnectionController: ControlRuntimeHost {
    /// Everything that happens to a controller, funnelled into ``handle(_:)``.
    enum Input: Sendable {
        case report(ConnectionAttempt, ConnectionAttempt.Report)
        case runtime(RuntimeInput<ControlTimer>)
    }

    nonisolated static let noun = "controller"
    nonisolated static func input(_ input: RuntimeInput<ControlTimer>) -> Input { .runtime(input) }
    nonisolated static func timer(_ timer: ControlTimer) -> ControlTimer { timer }
    nonisolated static func diagnosticName(of timer: ControlTimer) -> SessionTimer { timer.sessionTimer }

    /// Runs the controller until ``shutdown()`` or until the calling task is cancelled; either
    /// way it closes the connection and cancels its timers before it returns. A second call
    /// returns at once.
    public func run() async {
        await runLoop()
    }

    /// Ends the controller: closes the connection, cancels every timer, fails what waits.
    /// Returns once ``run()`` has let go of everything (at once when it never ran).
    public func shutdown() async {
        await shutdownRun()
    }

    func handle(_ input: Input) {
        switch input {
        case .report(let attempt, let report):
            reported(report, on: attempt)
        case .runtime(let input):
            handleRuntime(input)
        }
    }

    func runStarting() {
        perform(runtime.control.start())
    }

    func runFinished() {}

    var isLinked: Bool { runtime.control.phase != .idle }

    func timerFired(_ timer: ControlTimer) {
        perform(runtime.control.timerFired(timer))
    }

    func backgroundTimeTakenBack() {
        if let attempt = runtime.control.phase.attempt { lose(attempt, .backgroundTimeExpired, .retry) }
    }

    func logBackgroundTime(_ text: String) {
        logger.log(.debug, text)
    }

    private func reported(_ report: ConnectionAttempt.Report, on handle: ConnectionAttempt) {
        let attempt = handle.id
        switch report {
        case .opened:
            if live?.handle.id == attempt, case .opening = runtime.control.phase { live?.since = clock.now }
            let effects = runtime.control.opened(attempt)
            if live?.handle.id != attempt, effects.contains(where: { if case .teardown(attempt, _) = $0 { true } else { false } }) {
                // Opened after it was given up: close it at once, by the object its client holds.
                spawn(counted: false, close(handle, closed: OneShot()))
            }
            perform(effects)
        case .lost(let reason, let disposition):
            lose(attempt, reason, disposition)
        case .failed(let error):
            let disposition = classify(error)
            lose(attempt, .error(String(describing: error)), disposition)
        }
    }

    /// `attempt` is gone: let go of it (its client still closes it) and tell the state machine.
    func lose(_ attempt: UInt64, _ reason: DisconnectReason, _ disposition: RetryDisposition) {
        guard runtime.control.phase.attempt == attempt else {
            logger.log(.debug, "attempt \(attempt): a report after it ended (\(reason)); ignored")
            return
        }
        let uptime = live?.since.map { clock.elapsed(since: $0) }
        logger.log(.info, "connection lost: \(reason) (\(disposition))")
        release(attempt)
        perform(runtime.control.lost(attempt, reason: reason, disposition: disposition, uptime: uptime))
    }

    /// Closes `attempt`'s connection (cancelling its open) unless it was released already.
    func release(_ attempt: UInt64) {
        guard let current = live, current.handle.id == attempt else { return }
        live = nil
        current.cancel.fire()
        spawn(counted: false, close(current.handle, closed: current.closed))
    }

    // MARK: What the control asks of the client

    func startAttempt(_ attempt: UInt64) {
        let sink = inputSink
        let handle = ConnectionAttempt(id: attempt) { handle, report in sink.yield(.report(handle, report)) }
        let record = LiveAttempt(handle: handle, cancel: OneShot(), closed: OneShot())
        let (connection, cancel, after) = (connection, record.cancel, runtime.lastSettled)
        spawn(counted: false) {
            // Never two: the previous attempt's connection is closed first.
            if let after { _ = await race({ await after.wait() }, cancelledBy: cancel) }
            let (result, cancelled) = await race({ try await connection.open(handle) }, cancelledBy: cancel)
            if !cancelled, case .failure(let error)? = result { handle.lost(error) }
        }
        runtime.lastSettled = record.closed
        live = record
    }

    func tearDown(_ attempt: UInt64, cause: TeardownCause) {
        release(attempt)
        logger.log(.debug, "attempt \(attempt): let go (\(cause))")
    }

    func connectTimedOut(_ attempt: UInt64, reason: DisconnectReason) {
        lose(attempt, reason, .retry)
    }

    func policyGaveUp(_ reason: DisconnectReason) {}

    /// Closes `handle` on the client; `closed` fires once it returned, or after the connect
    /// timeout (a close that never returns must not hold every later attempt back).
    private func close(_ handle: ConnectionAttempt, closed: OneShot) -> @Sendable () async -> Void {
        let (connection, closeLimit, clock, logger) = (connection, connectTimeout, clock, logger)
        return {
            let done = OneShot()
            let (_, gaveUp) = await race({
                await connection.close(handle)
                done.fire()
            }, cancelledBy: Self.deadline(closeLimit, on: clock, unless: done))
            if gaveUp { logger.log(.warning, "\(handle): close did not return within \(closeLimit); opening the next attempt anyway") }
            closed.fire()
        }
    }

    /// Leaves nothing behind: closes the connection.
    func endHost() {
        if let attempt = live?.handle.id { release(attempt) }
    }
}

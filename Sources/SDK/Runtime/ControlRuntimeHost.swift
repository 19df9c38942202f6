import ConnectionPolicy

/// An actor that carries out ``ConnectionControl``'s decisions: ``Session`` (over a socket) and
/// ``ConnectionController`` (over an app's client). The run loop, the timers, the status and the
/// `connect()` waiters, the background time and the performing of ``ControlEffect``s are written
/// once, in this protocol's extensions; a host supplies only what differs — how it opens an
/// attempt, lets one go, and what a timer or an input of its own means.
protocol ControlRuntimeHost: Actor {
    associatedtype Input: Sendable
    associatedtype Timer: Hashable & Sendable

    var runtime: ControlRuntime<Timer> { get set }
    nonisolated var clock: SessionClock { get }
    nonisolated var logger: SessionLogger { get }
    nonisolated var statusBroadcaster: Broadcaster<ConnectionStatus> { get }
    nonisolated var diagnostics: DiagnosticsMirror { get }
    nonisolated var inputs: AsyncStream<Input> { get }
    nonisolated var inputSink: TrackedInputSink<Input> { get }
    nonisolated var lifecycleSource: (any LifecycleSource)? { get }
    nonisolated var networkMonitor: (any NetworkMonitor)? { get }
    nonisolated var conditionsSource: (any DeviceConditionsSource)? { get }
    /// Fires once ``runLoop()`` has let go of everything and returned.
    nonisolated var runEnded: OneShot { get }
    /// What the host is called in messages ("session", "controller").
    nonisolated static var noun: String { get }

    /// The host's input for a runtime input.
    nonisolated static func input(_ input: RuntimeInput<Timer>) -> Input
    /// The host's timer for one of the control's.
    nonisolated static func timer(_ timer: ControlTimer) -> Timer
    /// How diagnostics name a timer.
    nonisolated static func diagnosticName(of timer: Timer) -> SessionTimer

    /// Indicates that a connection is open or opening (what the background time depends on).
    var isLinked: Bool { get }
    /// Opens `attempt` (the control's ``ControlEffect/open(attempt:)``).
    func startAttempt(_ attempt: UInt64)
    /// Lets `attempt` go, if it is the current one.
    func tearDown(_ attempt: UInt64, cause: TeardownCause)
    /// `attempt` took longer than the connect timeout.
    func connectTimedOut(_ attempt: UInt64, reason: DisconnectReason)
    /// The policy gave up connecting: what waits for a connection learns why.
    func policyGaveUp(_ reason: DisconnectReason)
    /// A timer fired (not stale).
    func timerFired(_ timer: Timer)
    /// The host's own inputs; a runtime input goes to ``handleRuntime(_:)``.
    func handle(_ input: Input)
    /// The run loop is about to read its first input.
    func runStarting()
    /// Let go of what the host holds (its connection, its pending calls): the run ends.
    func endHost()
    /// The run has ended: the host's own streams end.
    func runFinished()
    /// The OS took back the background time: close the connection in order.
    func backgroundTimeTakenBack()
    func setAppState(_ state: AppLifecycleState)
    func setNetworkReachable(_ reachable: Bool)
    func setDeviceConditions(_ conditions: DeviceConditions)
    /// The control decided how the connection's liveness is checked from now on.
    func livenessChanged(_ liveness: Liveness)
    /// The control asks for the open connection to be checked now.
    func probeConnection()
    /// A line about the background time, with what the host knows of its link.
    func logBackgroundTime(_ text: String)
}

extension ControlRuntimeHost {
    var hasEnded: Bool { runtime.hasEnded }

    /// The conditions source reported `conditions`: with a network monitor, reachability stays
    /// the monitor's.
    func conditionsReported(_ conditions: DeviceConditions) {
        var conditions = conditions
        if networkMonitor != nil { conditions.isNetworkReachable = runtime.control.conditions.isNetworkReachable }
        setDeviceConditions(conditions)
    }

    func makeSerial() -> UInt64 { runtime.makeSerial() }

    /// Carries out the control's effects in order; what derives from the control is brought up
    /// to date before (the control just changed: a background hold begins while the link it is
    /// for still stands) and after (the link changed).
    func perform(_ effects: [ControlEffect]) {
        controlChanged()
        for effect in effects {
            switch effect {
            case .open(let attempt):
                startAttempt(attempt)
            case .teardown(let attempt, let cause):
                tearDown(attempt, cause: cause)
            case .connectTimedOut(let attempt, let reason):
                connectTimedOut(attempt, reason: reason)
            case .policyClosed(let reason):
                policyGaveUp(reason)
            case .arm(let timer, let delay):
                arm(Self.timer(timer), after: delay)
            case .cancel(let timer):
                cancelTimer(Self.timer(timer))
            case .status(let status):
                setStatus(status)
            case .liveness(let liveness):
                livenessChanged(liveness)
            case .probe:
                probeConnection()
            case .log(let level, let text):
                logger.log(level, text)
            }
        }
        controlChanged()
    }

    /// Diagnostics and background time follow the control (its policy, lifecycle and phase).
    func controlChanged() {
        let (name, state) = (runtime.control.policy.name, runtime.control.lifecycle)
        let current = diagnostics.current
        if current.policyName != name || current.appState != state {
            diagnostics.update { $0.policyName = name; $0.appState = state }
        }
        reconcileBackgroundTime()
    }

    // MARK: Status

    func setStatus(_ status: ConnectionStatus) {
        let previous = statusBroadcaster.current ?? .disconnected(.notStarted)
        guard statusBroadcaster.set(status) else { return }
        logger.log(.info, "status: \(previous) → \(status)")
        switch status {
        case .connected:
            resumeConnectWaiters(with: .success(()))
        case .disconnected(let reason):
            resumeConnectWaiters(with: .failure(SessionError(.disconnected, "disconnected: \(reason)", reason: reason)))
        case .connecting, .reconnecting:
            break
        }
    }

    func resumeConnectWaiters(with result: Result<Void, any Error>) {
        let waiters = runtime.connectWaiters
        runtime.connectWaiters = [:]
        for waiter in waiters.values { waiter.resume(with: result) }
    }

    /// `connect()`'s wait, once the host has asked the control for a connection: returns once
    /// connected; throws `notWanted` when nothing is opening or about to (`isIdle`), the reason
    /// of a disconnect, or `CancellationError` when the calling task is cancelled.
    func awaitConnected(isIdle: Bool) async throws {
        let status = statusBroadcaster.current ?? .disconnected(.notStarted)
        if status == .connected { return }
        if isIdle, !runtime.control.isRetryPending {
            let control = runtime.control
            throw SessionError(.notWanted, "the \(control.policy.name) policy does not connect now (app is \(control.lifecycle))", reason: status.reason)
        }
        let key = makeSerial()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    runtime.connectWaiters[key] = continuation
                }
            }
        } onCancel: {
            handleFromCancellation(Self.input(.connectWaiterCancelled(key)))
        }
    }

    /// Hands an input to the funnel from a cancellation handler. Such handlers run outside the
    /// actor and possibly before the run loop reads its inputs (or after it stopped), so they
    /// reach the actor directly instead of through the stream.
    nonisolated func handleFromCancellation(_ input: Input) {
        let activity = clock.activity
        activity?.begin()
        Task {
            await self.handle(input)
            activity?.end()
        }
    }

    /// What the runtime handles itself.
    func handleRuntime(_ input: RuntimeInput<Timer>) {
        switch input {
        case .wake:
            break
        case .timerFired(let timer, let serial):
            guard let armed = runtime.timers[timer], armed.serial == serial else { return }
            runtime.timers[timer] = nil
            timersChanged()
            timerFired(timer)
        case .connectWaiterCancelled(let key):
            runtime.connectWaiters.removeValue(forKey: key)?.resume(throwing: CancellationError())
        case .appStateReported(let state):
            setAppState(state)
        case .backgroundCloseDone(let serial):
            if runtime.backgroundKeeper.closeDone(serial: serial) { reconcileBackgroundTime() }
        case .backgroundTimeExpired(let serial):
            guard runtime.backgroundKeeper.expired(serial: serial) else { return }
            logger.log(.notice, "the OS took back the background time: closing the connection before the app is suspended")
            backgroundTimeTakenBack()
        }
    }

    // MARK: Timers

    /// Arms `timer` to fire after `delay`, replacing the one armed under that name.
    func arm(_ timer: Timer, after delay: Duration) {
        let armed = ControlRuntime<Timer>.ArmedTimer(serial: makeSerial(), cancel: OneShot())
        if let previous = runtime.timers.updateValue(armed, forKey: timer) { previous.cancel.fire() } else { timersChanged() }
        let (sink, clock, serial, cancel) = (inputSink, clock, armed.serial, armed.cancel)
        let deadline = clock.deadline(after: delay)
        spawn {
            // A tracking clock ends this task's unit while it sleeps, and begins it again when
            // it wakes: settle() returns only once the fire is handled.
            let (result, cancelled) = await race({ try await clock.sleepTracked(until: deadline) }, cancelledBy: cancel)
            if !cancelled, case .success? = result { sink.yield(Self.input(.timerFired(timer, serial: serial))) }
        }
    }

    func cancelTimer(_ timer: Timer) {
        guard let armed = runtime.timers.removeValue(forKey: timer) else { return }
        armed.cancel.fire()
        timersChanged()
    }

    /// The set of armed timers changed: diagnostics show it.
    private func timersChanged() {
        let armed = runtime.timers.keys.map(Self.diagnosticName).sorted()
        diagnostics.update { $0.armedTimers = armed }
    }

    // MARK: Background time

    var backgroundFacts: BackgroundTimeKeeper.Facts {
        BackgroundTimeKeeper.Facts(
            isForeground: runtime.control.lifecycle.isForeground, isLinked: isLinked, isFinished: runtime.runPhase == .finished, lastClosed: runtime.lastSettled
        )
    }

    /// Holds background time exactly while the link needs it: every begin matched by one end.
    func reconcileBackgroundTime() {
        for step in runtime.backgroundKeeper.reconcile(backgroundFacts) {
            switch step {
            case .watchClose(let closed, let serial):
                let sink = inputSink
                spawn {
                    await closed.wait()
                    sink.yield(Self.input(.backgroundCloseDone(serial: serial)))
                }
            case .log(let text):
                logBackgroundTime(text)
            }
        }
    }

    /// What is wrong with the background time held now, or `nil`: it is held exactly when
    /// needed (for the property tests and the chaos checker).
    var backgroundTimeDiscrepancy: String? {
        let held = runtime.backgroundKeeper.isHeld
        guard held != runtime.backgroundKeeper.isNeeded(backgroundFacts) else { return nil }
        return "background time \(held ? "held" : "not held") with the app \(runtime.control.lifecycle), linked \(isLinked), "
            + "close \(runtime.backgroundKeeper.isClosePending ? "pending" : "written"), run \(runtime.runPhase)"
    }
}

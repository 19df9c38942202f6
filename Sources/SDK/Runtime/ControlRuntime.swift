import ConnectionPolicy

/// What both performers of ``ConnectionControl`` keep — ``Session`` over a socket,
/// ``ConnectionController`` over an app's client — each fact once: the control itself, the run
/// phase, the armed timers, the `connect()` calls waiting, the background time, and the work
/// queued for the run loop. The host keeps only what its link needs; the behaviour around this
/// state is written once, in ``ControlRuntimeHost``.
struct ControlRuntime<Timer: Hashable & Sendable> {
    enum RunPhase {
        case notStarted, running, stopping, finished
    }

    struct ArmedTimer {
        let serial: UInt64
        let cancel: OneShot
    }

    /// The policy, the lifecycle and network facts, the link's phase and the policy's timers.
    var control: ConnectionControl
    var runPhase = RunPhase.notStarted
    /// The background time held now (see ``BackgroundTimeProvider``), and the close it waits for.
    var backgroundKeeper: BackgroundTimeKeeper
    /// Fires once the most recent attempt holds no connection any more: the next open waits for it.
    var lastSettled: OneShot?
    /// Every timer armed now; a fire whose serial is not the armed one is stale.
    var timers: [Timer: ArmedTimer] = [:]
    var connectWaiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
    /// Child tasks for the run loop to start, queued in this turn.
    var queued: [RuntimeWork] = []
    private var nextSerial: UInt64 = 0

    init(control: ConnectionControl, backgroundKeeper: BackgroundTimeKeeper) {
        self.control = control
        self.backgroundKeeper = backgroundKeeper
    }

    /// A host's runtime and input funnel, made as both hosts make them: the control starts
    /// from the platform's facts; the background time's expiry comes in through the funnel;
    /// with a tracking clock the host counts as work to come until its run starts.
    static func make<Input: Sendable>(
        policy: any SessionPolicy, lifecycle: (any LifecycleSource)?, network: (any NetworkMonitor)?, conditions: (any DeviceConditionsSource)?,
        connectTimeout: Duration, liveness: Liveness = Liveness(heartbeat: nil, probesOnReturn: false), powerSaving: PowerSaving = .standard,
        backgroundTime: any BackgroundTimeProvider, backgroundTimeName: String, clock: SessionClock, diagnostics: DiagnosticsMirror,
        input: @escaping @Sendable (RuntimeInput<Timer>) -> Input
    ) -> (runtime: ControlRuntime, inputs: AsyncStream<Input>, sink: TrackedInputSink<Input>) {
        let (inputs, continuation) = AsyncStream<Input>.makeStream()
        let sink = TrackedInputSink(continuation: continuation, activity: clock.activity)
        let control = ConnectionControl(
            policy: policy, lifecycle: lifecycle?.state ?? .active, conditions: initialConditions(conditions, network), connectTimeout: connectTimeout,
            liveness: liveness, powerSaving: powerSaving
        )
        let keeper = BackgroundTimeKeeper(provider: backgroundTime, name: backgroundTimeName) { sink.yield(input(.backgroundTimeExpired(serial: $0))) }
        let (name, state) = (control.policy.name, control.lifecycle)
        diagnostics.update { $0.policyName = name; $0.appState = state }
        // Until it runs, the host is work to come (its run loop ends this unit once started).
        clock.activity?.begin()
        return (ControlRuntime(control: control, backgroundKeeper: keeper), inputs, sink)
    }

    /// The conditions a host starts from: its conditions source's, with the network monitor's
    /// reachability when it has one (the monitor owns reachability).
    static func initialConditions(_ source: (any DeviceConditionsSource)?, _ network: (any NetworkMonitor)?) -> DeviceConditions {
        var conditions = source?.conditions ?? .unconstrained
        if let network { conditions.isNetworkReachable = network.isReachable }
        return conditions
    }

    /// Indicates that the host is shutting down or has ended: calls change nothing.
    var hasEnded: Bool {
        switch runPhase {
        case .notStarted, .running: false
        case .stopping, .finished: true
        }
    }

    /// A number used once (timer serials, waiter keys, subscriber ids).
    mutating func makeSerial() -> UInt64 {
        nextSerial += 1
        return nextSerial
    }

    /// Ends the tracked work of a host that never ran: its queued inputs, the tasks it meant
    /// to start, and its start (begun when it was made).
    func abandon<Input>(inputs: TrackedInputSink<Input>, activity: (any ActivityTracking)?) {
        inputs.abandon()
        for work in queued where work.counted { activity?.end() }
        activity?.end()
    }
}

/// One child task of a run loop. Counted: with a tracking clock it is a unit of work from when
/// it is queued until its body returns (a body that waits on something outside says so itself).
struct RuntimeWork: Sendable {
    let counted: Bool
    let body: @Sendable () async -> Void
}

/// What the run loop hands to the runtime rather than to its host.
enum RuntimeInput<Timer: Hashable & Sendable>: Sendable {
    /// Work was queued for the run loop to start.
    case wake
    case timerFired(Timer, serial: UInt64)
    /// A task waiting in `connect()` was cancelled.
    case connectWaiterCancelled(UInt64)
    /// The app reported its lifecycle state without waiting (`reportAppState(_:)`).
    case appStateReported(AppLifecycleState)
    /// The close of a connection torn down in the background is done.
    case backgroundCloseDone(serial: UInt64)
    /// The OS took back the background time held under `serial`.
    case backgroundTimeExpired(serial: UInt64)
}

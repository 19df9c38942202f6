public import ConnectionPolicy

/// Tether's connection policies for the client an app already has: runs a `SessionPolicy`
/// (`AutoPolicy`, `ManualPolicy` or the app's own) against a ``ManagedConnection``, and brings
/// everything that is not protocol — the lifecycle source, the network monitor, the clock and
/// timers, backoff and what is worth retrying, the connect timeout, never two opens at once, an
/// open in flight cancelled when the policy stops wanting it, background execution time, status
/// with a reason for every disconnect, logging.
///
/// Every input (host calls, lifecycle, network, timers, the client's reports) goes through one
/// funnel read by ``run()``; the decisions are made by the same state machine that
/// ``Session`` runs.
///
/// ```swift
/// func startRealtime(with client: some ManagedConnection) -> ConnectionController {
///     let controller = ConnectionController(connection: client, policy: AutoPolicy(),
///                                           lifecycle: PlatformDefaults.lifecycleSource())
///     Task { await controller.run() }
///     return controller
/// }
/// ```
public actor ConnectionController {
    /// Your client's connection, which the controller opens and closes as the policy decides.
    public nonisolated let connection: any ManagedConnection
    nonisolated let clock: SessionClock
    nonisolated let lifecycleSource: (any LifecycleSource)?
    nonisolated let networkMonitor: (any NetworkMonitor)?
    nonisolated let conditionsSource: (any DeviceConditionsSource)?
    nonisolated let logger: SessionLogger
    nonisolated let classify: @Sendable (any Error) -> RetryDisposition
    nonisolated let pinger: (@Sendable () async throws -> Void)?
    nonisolated let pingTimeout: Duration
    nonisolated let connectTimeout: Duration
    nonisolated let statusBroadcaster = Broadcaster<ConnectionStatus>(.disconnected(.notStarted))
    nonisolated let inputs: AsyncStream<Input>
    nonisolated let inputSink: TrackedInputSink<Input>
    nonisolated let runEnded = OneShot()
    /// What ``policyName``, ``appState`` and ``armedTimers`` read, without `await`.
    nonisolated let diagnostics = DiagnosticsMirror()

    /// The control, the timers, the waiters, the background time: the runtime ``Session`` shares.
    var runtime: ControlRuntime<ControlTimer>
    /// The current attempt, and what the controller holds for it.
    var live: LiveAttempt?

    struct LiveAttempt {
        let handle: ConnectionAttempt
        /// Fired to abandon the open.
        let cancel: OneShot
        /// Fired once its connection is closed.
        let closed: OneShot
        var since: SessionClock.Instant?
    }

    /// Makes a controller. Nothing happens until ``run()`` runs.
    ///
    /// - Parameters:
    ///   - connection: the app's client.
    ///   - policy: when to be connected (`AutoPolicy`, `ManualPolicy`, or the app's own).
    ///   - clock: the clock timers run on (a test clock in tests).
    ///   - lifecycle: where lifecycle changes come from; `nil` to report them with
    ///     ``setAppState(_:)`` only (it then starts `active`).
    ///   - network: where reachability changes come from; `nil` to report them with
    ///     ``setNetworkReachable(_:)`` only.
    ///   - conditions: where the device's conditions come from (the path, Low Power Mode, the
    ///     thermal state; ``PlatformDefaults/conditionsSource()``); `nil` to report them with
    ///     ``setDeviceConditions(_:)`` only. With a network monitor too, reachability is the
    ///     monitor's.
    ///   - backgroundTime: where background execution time comes from
    ///     (``PlatformDefaults/backgroundTime()`` on iOS).
    ///   - connectTimeout: how long an open may take before it is abandoned and retried.
    ///   - isRetryable: what an error reported with ``ConnectionAttempt/lost(_:)`` means for
    ///     trying again (default: every error is passing; return `.doNotRetry` for the fatal
    ///     ones, such as rejected credentials).
    ///   - ping: what ``ping()`` does on the client (its own ping, awaited up to `pingTimeout`);
    ///     `nil`: nothing beyond telling the policy (Manual's watchdog).
    ///   - pingTimeout: how long ``ping()`` waits for the client's ping (default 10 s).
    ///   - logger: where decisions are logged.
    public init(
        connection: any ManagedConnection,
        policy: some SessionPolicy,
        clock: any Clock<Duration> = ContinuousClock(),
        lifecycle: (any LifecycleSource)? = nil,
        network: (any NetworkMonitor)? = nil,
        conditions: (any DeviceConditionsSource)? = nil,
        backgroundTime: any BackgroundTimeProvider = NoBackgroundTime(),
        connectTimeout: Duration = .seconds(15),
        isRetryable: @escaping @Sendable (any Error) -> RetryDisposition = { _ in .retry },
        ping: (@Sendable () async throws -> Void)? = nil,
        pingTimeout: Duration = .seconds(10),
        logger: SessionLogger = .platformDefault
    ) {
        self.connection = connection
        self.clock = SessionClock(clock)
        self.lifecycleSource = lifecycle
        self.networkMonitor = network
        self.conditionsSource = conditions
        self.logger = logger
        self.classify = isRetryable
        self.pinger = ping
        self.pingTimeout = pingTimeout
        self.connectTimeout = connectTimeout
        (runtime, inputs, inputSink) = ControlRuntime.make(
            policy: policy, lifecycle: lifecycle, network: network, conditions: conditions, connectTimeout: connectTimeout, backgroundTime: backgroundTime,
            backgroundTimeName: "Tether connection", clock: self.clock, diagnostics: diagnostics, input: Self.input
        )
    }

    deinit {
        // A controller that never ran: what it queued, and its start, will never come.
        if runtime.runPhase == .notStarted { runtime.abandon(inputs: inputSink, activity: clock.activity) }
    }

    // MARK: Status

    /// The connection's status now.
    public nonisolated var status: ConnectionStatus { statusBroadcaster.current ?? .disconnected(.notStarted) }

    /// The status now, then every change, with the reason for each disconnect. Any number of
    /// subscribers; each stream ends when the controller does.
    public nonisolated var statusUpdates: AsyncStream<ConnectionStatus> { statusBroadcaster.updates(replayingCurrent: true) }

    /// How many status changes the controller has published (for SDKTesting's waits).
    package nonisolated var statusVersion: UInt64 { statusBroadcaster.version }

    /// ``statusUpdates`` with the version of its first value.
    package nonisolated var versionedStatusUpdates: (stream: AsyncStream<ConnectionStatus>, firstVersion: UInt64) {
        statusBroadcaster.versionedUpdates(replayingCurrent: true)
    }

    /// The name of the policy in charge (read without `await`, like `status`).
    public nonisolated var policyName: String { diagnostics.current.policyName }

    /// The app's lifecycle state as the controller knows it.
    public nonisolated var appState: AppLifecycleState { diagnostics.current.appState }

    /// The timers armed now (`.reconnect`, `.watchdog`, `.backgroundGrace`, `.connectTimeout`),
    /// sorted by name: for diagnostics and tests.
    public nonisolated var armedTimers: [SessionTimer] { diagnostics.current.armedTimers }

    /// Indicates that background execution time is held now.
    public var holdsBackgroundTime: Bool { runtime.backgroundKeeper.isHeld }
}

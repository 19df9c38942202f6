public import ConnectionPolicy

/// The shared session core: it owns the socket, the subscriptions and the pending requests,
/// and carries out what the connection policy decides.
///
/// Every input — host calls, lifecycle and network changes, transport events, timer fires —
/// goes through one funnel, which feeds the policy and reconciles what the
/// policy wants with what the socket is doing: never two sockets, an in-flight connect is
/// cancelled when the policy stops wanting it, a burst of lifecycle flaps converges.
///
/// Run it for its lifetime with ``run()`` (from SwiftUI's `.task`, a service group, or any task
/// you own), or let it run itself with ``start(settings:transport:clock:lifecycle:network:conditions:backgroundTime:)``.
public actor Session {
    /// The settings the session was made with.
    public nonisolated let settings: AppSettings
    nonisolated let transport: any Transport
    nonisolated let clock: SessionClock
    nonisolated let lifecycleSource: (any LifecycleSource)?
    nonisolated let networkMonitor: (any NetworkMonitor)?
    nonisolated let conditionsSource: (any DeviceConditionsSource)?
    nonisolated let backgroundTime: any BackgroundTimeProvider
    nonisolated let statusBroadcaster = Broadcaster<ConnectionStatus>(.disconnected(.notStarted))
    nonisolated let reportBroadcaster = Broadcaster<RecoveryReport>(nil)
    nonisolated let outboxBroadcaster = Broadcaster<Int>(0)
    nonisolated let storeStatusBroadcaster: Broadcaster<SessionStoreStatus>
    nonisolated let storeLossBroadcaster = Broadcaster<StoreLoss>(nil)
    nonisolated let earlierOutcomeBroadcaster = Broadcaster<EarlierPublish>(nil)
    nonisolated let inputs: AsyncStream<Input>
    nonisolated let inputSink: InputSink
    nonisolated let runEnded = OneShot()
    nonisolated var logger: SessionLogger { settings.logger }
    /// What ``policyName``, ``appState``, ``armedTimers``, ``subscribedChannels`` and
    /// ``recoveryJournal`` read, without `await`.
    nonisolated let diagnostics = DiagnosticsMirror()

    /// The control (policy, lifecycle, network, the link's phase), the timers, the `connect()`
    /// waiters, the background time: the runtime ``ConnectionController`` shares.
    var runtime: ControlRuntime<TimerKey>
    var lifecycle: AppLifecycleState { runtime.control.lifecycle }
    /// The socket: none, opening, or open with everything that lives and dies with it.
    var link: Link = .idle
    /// What the protocol keeps across sockets (``WireMachine/sessionState``), between them.
    var wireSessionState: WireSessionState?
    /// What of it outlives the process (``WireMachine/durableSessionState``), as last stored.
    var durableWireSessionState: WireSessionState?
    /// Upgrades refused with an HTTP status since the last socket that opened.
    var upgradeRefusalsInARow = 0
    /// The requests waiting for their replies, and their deadlines.
    var requests = PendingRequests()
    var channels: [String: ChannelState] = [:]
    var selfRunner: Task<Void, Never>?
    /// The significant steps replayed after a reconnect (subscriptions and app-defined steps),
    /// in order, and what the app's own steps do.
    /// (Changed through ``appendToJournal(_:)`` and ``removeFromJournal(where:)``, which keep
    /// ``recoveryJournal``'s mirror in step.)
    var journal = Journal()
    var recovery: Recovery?
    /// What the next recovery will be: its trigger, and whether it replays (after the first).
    var next = NextRecovery()
    /// The turn under way: frames and deliveries go out together when it ends.
    var turn = Turn()
    var outbox: [OutboxEntry] = [] {
        didSet { outboxBroadcaster.set(outbox.count) }
    }
    /// The bytes of the outbox's entries together (kept with every change of `outbox`: summing
    /// them per publish made a burst of offline publishes quadratic).
    var outboxBytes = 0
    var refresh: Refresh?
    /// The store, once opened (``openStore()``): what is written, and how far.
    var storeLink: StoreLink?
    var storeOpened = false
    /// The store could not be read yet (`notReadableYet`): it is read again when the app comes
    /// to the foreground, and merged with what this launch did meanwhile.
    var storeAwaitsReadable = false
    /// The positions an earlier launch kept, for the channels the app has not subscribed to again.
    var storedPositions: [String: (handed: StreamPosition?, finished: StreamPosition?, at: Int64?)] = [:]
    /// The publishes of earlier launches still kept, in the order they were made.
    var earlier: [(key: String, value: EarlierPublish)] = []

    /// Makes a session. Nothing happens until ``run()`` runs.
    ///
    /// - Parameters:
    ///   - settings: from ``AppSettings/Builder``.
    ///   - transport: the WebSocket transport.
    ///   - clock: the clock timers run on (a test clock in tests).
    ///   - lifecycle: where lifecycle changes come from; `nil` to report them only with
    ///     ``setAppState(_:)`` (the session then starts as `active`).
    ///   - network: where reachability changes come from; `nil` to report them only with
    ///     ``setNetworkReachable(_:)``.
    ///   - conditions: where the device's conditions come from (the path, Low Power Mode, the
    ///     thermal state; ``PlatformDefaults/conditionsSource()``); `nil` to report them with
    ///     ``setDeviceConditions(_:)`` only. With a network monitor too, reachability is the
    ///     monitor's.
    ///   - backgroundTime: where background execution time comes from
    ///     (``PlatformDefaults/backgroundTime()`` on iOS, so Manual's window and Auto's grace
    ///     really run there); by default none is asked for.
    public init(
        settings: AppSettings,
        transport: any Transport,
        clock: any Clock<Duration> = ContinuousClock(),
        lifecycle: (any LifecycleSource)? = nil,
        network: (any NetworkMonitor)? = nil,
        conditions: (any DeviceConditionsSource)? = nil,
        backgroundTime: any BackgroundTimeProvider = NoBackgroundTime()
    ) {
        self.settings = settings
        self.storeStatusBroadcaster = Broadcaster(settings.store == nil ? .off : nil)
        self.clock = SessionClock(clock)
        // A test clock counts what the transport yields; the session opens through it alike.
        self.transport = self.clock.tracking(transport)
        self.lifecycleSource = lifecycle
        self.networkMonitor = network
        self.conditionsSource = conditions
        self.backgroundTime = backgroundTime
        (runtime, inputs, inputSink) = ControlRuntime.make(
            policy: settings.makePolicy(), lifecycle: lifecycle, network: network, conditions: conditions, connectTimeout: settings.connectTimeout,
            liveness: settings.baseLiveness, powerSaving: settings.powerSaving, backgroundTime: backgroundTime, backgroundTimeName: Self.backgroundTimeName, clock: self.clock, diagnostics: diagnostics, input: Self.input
        )
    }

    deinit {
        // A session that never ran: what it queued, and its start, will never come.
        if runtime.runPhase == .notStarted { runtime.abandon(inputs: inputSink, activity: clock.activity) }
    }

    /// Makes a session and runs it in a task of its own: CometChat's configure-at-init-and-go.
    /// Call ``shutdown()`` to end it; the session keeps itself alive until then.
    public static func start(
        settings: AppSettings,
        transport: any Transport,
        clock: any Clock<Duration> = ContinuousClock(),
        lifecycle: (any LifecycleSource)? = nil,
        network: (any NetworkMonitor)? = nil,
        conditions: (any DeviceConditionsSource)? = nil,
        backgroundTime: any BackgroundTimeProvider = NoBackgroundTime()
    ) async -> Session {
        let session = Session(
            settings: settings, transport: transport, clock: clock, lifecycle: lifecycle, network: network, conditions: conditions, backgroundTime: backgroundTime
        )
        await session.startRunner()
        return session
    }

    private func startRunner() {
        guard selfRunner == nil else { return }
        selfRunner = Task { await self.run() }
    }

    // MARK: Status

    /// The connection's status now.
    public nonisolated var status: ConnectionStatus { statusBroadcaster.current ?? .disconnected(.notStarted) }

    /// The status now, then every change, with the reason for each disconnect. Any number of
    /// subscribers; each stream ends when the session does. It **replays the current status**
    /// first, unlike ``recoveryReports``, which starts with the next report.
    public nonisolated var statusUpdates: AsyncStream<ConnectionStatus> { statusBroadcaster.updates(replayingCurrent: true) }

    /// The status's version: how many status changes the session has published (for
    /// SDKTesting's waits on the *next* status).
    package nonisolated var statusVersion: UInt64 { statusBroadcaster.version }

    /// ``statusUpdates`` with the version of its first value.
    package nonisolated var versionedStatusUpdates: (stream: AsyncStream<ConnectionStatus>, firstVersion: UInt64) {
        statusBroadcaster.versionedUpdates(replayingCurrent: true)
    }

    /// A report for every recovery from now on (each connection's: replayed steps, caught-up
    /// messages, gaps, outbox, time to fully recovered). Any number of subscribers. It does
    /// **not** replay the last report (``lastRecoveryReport`` has it): subscribe before the
    /// recovery you want to see.
    public nonisolated var recoveryReports: AsyncStream<RecoveryReport> { reportBroadcaster.updates(replayingCurrent: false) }

    /// How many publishes wait in the outbox: now, then every change (for a "sending…" badge).
    public nonisolated var outboxCountUpdates: AsyncStream<Int> { outboxBroadcaster.updates(replayingCurrent: true) }

    /// The last recovery's report.
    public nonisolated var lastRecoveryReport: RecoveryReport? { reportBroadcaster.current }

    /// The name of the policy in charge (`auto`, `manual`, or a custom policy's). Read without
    /// `await`, like every diagnostic here.
    public nonisolated var policyName: String { diagnostics.current.policyName }

    /// The timers armed now (``SessionTimer``: `.watchdog`, `.reconnect`, `.backgroundGrace`,
    /// `.connectTimeout`, `.request`, `.heartbeat`, a protocol's own …), sorted by name: for
    /// diagnostics and tests.
    public nonisolated var armedTimers: [SessionTimer] { diagnostics.current.armedTimers }

    /// The app's lifecycle state as the session knows it.
    public nonisolated var appState: AppLifecycleState { diagnostics.current.appState }

    /// Starts the policy on the first input, so that host calls made before `run()` come after
    /// the policy's start, in order.
    func ensureStarted() {
        guard !runtime.control.isStarted else { return }
        openStore()
        perform(runtime.control.start())
    }

    /// Throws ``SessionError/Code/sessionEnded`` once the session is shutting down or has
    /// ended: nothing it could start would ever be carried out.
    func refuseIfEnded(_ call: StaticString) throws(SessionError) {
        guard !hasEnded else { throw SessionError(.sessionEnded, "\(call) after the session ended") }
    }

    func makeRequestID() -> RequestID {
        defer { requests.nextID += 1 }
        return requests.nextID
    }
}

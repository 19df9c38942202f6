/// Auto mode (the default, CometChat's `autoEstablishSocketConnection(true)`): connected while
/// the app is in the foreground; disconnected when it goes to the background (at once, or after
/// `backgroundGrace`); reconnected on return — unless the app called `disconnect()`, after which
/// nothing reconnects until it calls `connect()`.
public struct AutoPolicy: SessionPolicy {
    /// The settings of Auto mode.
    public struct Configuration: Hashable, Sendable {
        /// How long an open connection may stay open in the background (zero: none).
        public var backgroundGrace: Duration
        /// The backoff between failed reconnect attempts.
        public var backoff: Backoff
        /// How long a connection must stay open to count as working (see ``ConnectionTracker``).
        public var stableAfter: Duration
        /// The rules that lengthen the backoff on an expensive path (``PowerSaving``).
        public var powerSaving: PowerSaving

        /// Auto mode's settings: how long to stay connected after the app leaves the foreground
        /// (`backgroundGrace`, zero: disconnect at once), the reconnect `backoff`, how long a
        /// connection must last before the backoff starts over (`stableAfter`), and the
        /// `powerSaving` rules.
        public init(backgroundGrace: Duration = .zero, backoff: Backoff = .standard, stableAfter: Duration = .seconds(5), powerSaving: PowerSaving = .standard) {
            self.backgroundGrace = backgroundGrace
            self.backoff = backoff
            self.stableAfter = stableAfter
            self.powerSaving = powerSaving
        }
    }

    /// The settings this policy runs with.
    public let configuration: Configuration
    /// The app's lifecycle state as last reported.
    public private(set) var lifecycle: AppLifecycleState = .active
    /// Indicates that the app called `disconnect()` and has not called `connect()` since.
    public private(set) var isDisconnectedByApp = false
    /// The grace timer running while an open connection is kept in the background.
    public private(set) var graceTimer: PolicyTimer?
    /// The reconnect bookkeeping.
    public private(set) var tracker: ConnectionTracker
    private var timers = TimerGenerations()

    public var name: String { "auto" }

    /// An Auto policy with these settings; `jitter` spreads the reconnect delays (fixed in tests).
    public init(_ configuration: Configuration = Configuration(), jitter: JitterSource = .random()) {
        self.configuration = configuration
        self.tracker = ConnectionTracker(
            backoff: configuration.backoff, jitter: jitter, stableAfter: configuration.stableAfter, powerSaving: configuration.powerSaving
        )
    }

    private var isWanted: Bool {
        !isDisconnectedByApp && (lifecycle.isForeground || graceTimer != nil)
    }

    private mutating func reconcile(reason: DisconnectReason) -> [PolicyAction] {
        tracker.reconcile(wanted: isWanted, mayOpen: lifecycle.isForeground, reason: reason)
    }

    private mutating func cancelGrace() -> [PolicyAction] {
        guard let timer = graceTimer else { return [] }
        graceTimer = nil
        return [.cancelTimer(timer)]
    }

    public mutating func start(in context: PolicyContext) -> [PolicyAction] {
        lifecycle = context.lifecycle
        graceTimer = nil
        tracker.adopt(context)
        return reconcile(reason: .appBackgrounded)
    }

    public mutating func lifecycleChanged(to state: AppLifecycleState) -> [PolicyAction] {
        let wasForeground = lifecycle.isForeground
        lifecycle = state
        if state.isForeground {
            var actions = cancelGrace()
            if !wasForeground, case .failed(let reason) = tracker.phase, reason.code == .retriesExhausted {
                // A return to the foreground is a fresh start after giving up; rejected
                // credentials are not (they wait for the app).
                tracker.reset()
            }
            actions += reconcile(reason: .appBackgrounded)
            return actions
        }
        guard wasForeground else { return [] }
        var actions: [PolicyAction] = []
        // Backgrounded during a reconnect: cancel it, and do not retry.
        actions += tracker.stopRetrying(reason: .appBackgrounded)
        if configuration.backgroundGrace > .zero, !isDisconnectedByApp, tracker.isConnected {
            let timer = timers.make(.backgroundGrace)
            graceTimer = timer
            actions.append(.armTimer(timer, after: configuration.backgroundGrace))
        }
        actions += reconcile(reason: .appBackgrounded)
        return actions
    }

    public mutating func connectRequested() -> [PolicyAction] {
        isDisconnectedByApp = false
        tracker.reset()
        return reconcile(reason: .appBackgrounded)
    }

    public mutating func disconnectRequested() -> [PolicyAction] {
        isDisconnectedByApp = true
        var actions = cancelGrace()
        let closing = tracker.reconcile(wanted: false, reason: .appRequested)
        actions += closing.isEmpty ? [.closeConnection(.appRequested)] : closing
        return actions
    }

    public mutating func pingRequested() -> [PolicyAction] { [] }

    public mutating func connectionOpened() -> [PolicyAction] {
        tracker.opened()
        return reconcile(reason: .appBackgrounded)
    }

    public mutating func connectionLost(_ loss: ConnectionLoss) -> [PolicyAction] {
        // In the background no retry runs, and the grace period ends with the connection.
        var actions = lifecycle.isForeground ? [] : cancelGrace()
        actions += tracker.lost(loss, retriesAllowed: lifecycle.isForeground && !isDisconnectedByApp)
        return actions
    }

    public mutating func timerFired(_ timer: PolicyTimer) -> [PolicyAction] {
        if timer.id == .backgroundGrace {
            guard timer == graceTimer else { return [] }
            graceTimer = nil
            return reconcile(reason: .appBackgrounded)
        }
        return tracker.timerFired(timer) ?? []
    }

    public mutating func networkReachabilityChanged(isReachable: Bool) -> [PolicyAction] {
        tracker.networkChanged(isReachable: isReachable)
    }

    /// A path that changed (Wi-Fi ↔ cellular) retries a pending reconnect at once.
    public mutating func conditionsChanged(to conditions: DeviceConditions) -> [PolicyAction] {
        tracker.conditionsChanged(to: conditions)
    }
}

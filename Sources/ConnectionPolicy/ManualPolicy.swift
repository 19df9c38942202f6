/// Manual mode (CometChat's `autoEstablishSocketConnection(false)`): connected only between the
/// app's `connect()` and `disconnect()`. In the background a watchdog disconnects after
/// `backgroundTimeout` (30 s by default) unless the app calls `ping()`, each of which buys
/// another full window. After the watchdog, `disconnect()`, or a loss in the background, the
/// connection stays closed — even on return to the foreground — until the app calls `connect()`.
/// In the foreground a lost connection is reconnected with backoff.
public struct ManualPolicy: SessionPolicy {
    /// The settings of Manual mode.
    public struct Configuration: Hashable, Sendable {
        /// How long the connection stays open in the background without a `ping()`.
        public var backgroundTimeout: Duration
        /// The backoff between failed reconnect attempts.
        public var backoff: Backoff
        /// How long a connection must stay open to count as working (see ``ConnectionTracker``).
        public var stableAfter: Duration
        /// The rules that lengthen the backoff on an expensive path (``PowerSaving``).
        public var powerSaving: PowerSaving

        /// Manual mode's settings: the background watchdog (`backgroundTimeout`, 30 s), the
        /// reconnect `backoff`, how long a connection must last before the backoff starts over
        /// (`stableAfter`), and the `powerSaving` rules.
        public init(
            backgroundTimeout: Duration = .seconds(30), backoff: Backoff = .standard, stableAfter: Duration = .seconds(5), powerSaving: PowerSaving = .standard
        ) {
            self.backgroundTimeout = backgroundTimeout
            self.backoff = backoff
            self.stableAfter = stableAfter
            self.powerSaving = powerSaving
        }
    }

    /// The settings this policy runs with.
    public let configuration: Configuration
    /// The app's lifecycle state as last reported.
    public private(set) var lifecycle: AppLifecycleState = .active
    /// Indicates that the app wants a connection: it called `connect()` and nothing has ended it since.
    public private(set) var isRequestedByApp = false
    /// The background watchdog, while armed.
    public private(set) var watchdog: PolicyTimer?
    /// The reconnect bookkeeping.
    public private(set) var tracker: ConnectionTracker
    private var timers = TimerGenerations()

    public var name: String { "manual" }

    /// A Manual policy with these settings; `jitter` spreads the reconnect delays (fixed in tests).
    public init(_ configuration: Configuration = Configuration(), jitter: JitterSource = .random()) {
        self.configuration = configuration
        self.tracker = ConnectionTracker(
            backoff: configuration.backoff, jitter: jitter, stableAfter: configuration.stableAfter, powerSaving: configuration.powerSaving
        )
    }

    private mutating func armWatchdog() -> [PolicyAction] {
        var actions = cancelWatchdog()
        let timer = timers.make(.watchdog)
        watchdog = timer
        actions.append(.armTimer(timer, after: configuration.backgroundTimeout))
        return actions
    }

    private mutating func cancelWatchdog() -> [PolicyAction] {
        guard let timer = watchdog else { return [] }
        watchdog = nil
        return [.cancelTimer(timer)]
    }

    public mutating func start(in context: PolicyContext) -> [PolicyAction] {
        lifecycle = context.lifecycle
        watchdog = nil
        tracker.adopt(context)
        // Replacing a policy keeps an open connection open: the app asked for it once.
        isRequestedByApp = context.isConnected
        if isRequestedByApp, !lifecycle.isForeground {
            return armWatchdog()
        }
        return []
    }

    public mutating func lifecycleChanged(to state: AppLifecycleState) -> [PolicyAction] {
        let wasForeground = lifecycle.isForeground
        lifecycle = state
        if state.isForeground {
            return cancelWatchdog()
        }
        guard wasForeground, isRequestedByApp else { return [] }
        // Backgrounded during a reconnect: cancel it, and wait for `connect()`.
        let stopped = tracker.stopRetrying(reason: .appBackgrounded)
        if !stopped.isEmpty {
            isRequestedByApp = false
            return stopped
        }
        return tracker.isConnectedOrConnecting ? armWatchdog() : []
    }

    public mutating func connectRequested() -> [PolicyAction] {
        isRequestedByApp = true
        tracker.reset()
        var actions = tracker.reconcile(wanted: true, reason: .appRequested)
        if !lifecycle.isForeground, watchdog == nil {
            actions += armWatchdog()
        }
        return actions
    }

    public mutating func disconnectRequested() -> [PolicyAction] {
        isRequestedByApp = false
        var actions = cancelWatchdog()
        let closing = tracker.reconcile(wanted: false, reason: .appRequested)
        actions += closing.isEmpty ? [.closeConnection(.appRequested)] : closing
        return actions
    }

    public mutating func pingRequested() -> [PolicyAction] {
        // Each ping in the background buys another full window.
        guard !lifecycle.isForeground, isRequestedByApp, tracker.isConnectedOrConnecting else { return [] }
        return armWatchdog()
    }

    public mutating func connectionOpened() -> [PolicyAction] {
        tracker.opened()
        return tracker.reconcile(wanted: isRequestedByApp, reason: .appRequested)
    }

    public mutating func connectionLost(_ loss: ConnectionLoss) -> [PolicyAction] {
        if lifecycle.isForeground {
            return tracker.lost(loss, retriesAllowed: isRequestedByApp)
        }
        // Lost in the background: no retry and no watchdog; only `connect()` reconnects.
        isRequestedByApp = false
        return cancelWatchdog() + tracker.lost(loss, retriesAllowed: false)
    }

    public mutating func timerFired(_ timer: PolicyTimer) -> [PolicyAction] {
        if timer.id == .watchdog {
            guard timer == watchdog else { return [] }
            watchdog = nil
            isRequestedByApp = false
            return tracker.reconcile(wanted: false, reason: .watchdogExpired)
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

/// The reconnect bookkeeping every policy shares: which phase the connection is in, how many
/// attempts failed in a row, the backoff before the next one, and the network's reachability.
///
/// The owning policy decides *whether* a connection is wanted and whether retries are allowed
/// now (for instance: not in the background); the tracker decides *how*: it never asks for a
/// second connection while one is open or opening, retries a working connection that was lost
/// at once and a failed attempt after the backoff, pauses while the network is unreachable, and
/// gives up after a fatal failure or when the attempt limit is reached.
public struct ConnectionTracker: Hashable, Sendable {
    /// The connection's phase, as the tracker sees it.
    ///
    /// A later release may add a phase, so a `switch` over it needs a `default`.
    public enum Phase: Hashable, Sendable {
        /// No connection, none opening, no retry pending.
        case idle
        /// An attempt is in flight; `failures` attempts failed in a row before it.
        case connecting(failures: Int, isRetry: Bool)
        /// A connection is open; `failures` is carried until it has proved stable.
        case connected(failures: Int)
        /// A retry is pending on `timer`.
        case waitingToRetry(failures: Int, timer: PolicyTimer)
        /// A retry waits for the network to become reachable.
        case waitingForNetwork(failures: Int)
        /// A fatal failure or the attempt limit: nothing happens until ``reset()``.
        case failed(DisconnectReason)
    }

    /// The phase now.
    public private(set) var phase: Phase = .idle
    /// Indicates that the network is reachable, as last reported.
    public private(set) var isNetworkReachable: Bool
    /// The device's conditions, as last reported (reachability: ``isNetworkReachable``).
    public private(set) var conditions = DeviceConditions.unconstrained
    /// The network path's interface, as last reported.
    public var interface: NetworkInterface { conditions.interface }
    /// The rules that lengthen the backoff on an expensive path.
    public let powerSaving: PowerSaving
    /// The backoff between failed attempts.
    public let backoff: Backoff
    /// A connection open at least this long counts as working: losing it retries at once and
    /// forgets earlier failures. A shorter one counts as one more failure (no reconnect storm
    /// against a server that accepts and drops).
    public let stableAfter: Duration
    private var jitter: JitterSource
    private var timers = TimerGenerations()

    /// A tracker that retries with `backoff` and `jitter`, starts the backoff over after a
    /// connection stable for `stableAfter`, knows whether the network is reachable, and stretches
    /// the backoff on an expensive path as `powerSaving` says.
    public init(
        backoff: Backoff = .standard, jitter: JitterSource = .random(), stableAfter: Duration = .seconds(5), isNetworkReachable: Bool = true,
        powerSaving: PowerSaving = .standard
    ) {
        self.backoff = backoff
        self.jitter = jitter
        self.stableAfter = stableAfter
        self.isNetworkReachable = isNetworkReachable
        self.powerSaving = powerSaving
    }

    /// Indicates that a connection is open.
    public var isConnected: Bool {
        if case .connected = phase { true } else { false }
    }

    /// Indicates that a connection is opening or open.
    public var isConnectedOrConnecting: Bool {
        switch phase {
        case .connecting, .connected: true
        default: false
        }
    }

    /// Indicates that the tracker is recovering from a loss: a retry is pending, waiting for the
    /// network, or in flight.
    public var isRetrying: Bool {
        switch phase {
        case .connecting(_, let isRetry): isRetry
        case .waitingToRetry, .waitingForNetwork: true
        default: false
        }
    }

    /// Indicates that the tracker gave up and waits for ``reset()``.
    public var hasFailed: Bool {
        if case .failed = phase { true } else { false }
    }

    /// Takes over the facts of a session that is already running (policy start or replacement).
    public mutating func adopt(_ context: PolicyContext) {
        isNetworkReachable = context.isNetworkReachable
        conditions = context.conditions
        phase = context.isConnected ? .connected(failures: 0) : .idle
    }

    /// Forgets a failure, so the next reconcile may open a connection again.
    public mutating func reset() {
        if case .failed = phase { phase = .idle }
    }

    /// Moves toward the owner's wish. `mayOpen` is false where the owner keeps an open
    /// connection but opens no new one (Auto's background grace); `reason` is reported when the
    /// connection is closed or a pending retry is dropped.
    public mutating func reconcile(wanted: Bool, mayOpen: Bool = true, reason: DisconnectReason) -> [PolicyAction] {
        switch (phase, wanted) {
        case (.idle, true):
            guard mayOpen else { return [] }
            return startAttempt(failures: 0, isRetry: false)
        case (.connecting, true), (.connected, true), (.waitingToRetry, true), (.waitingForNetwork, true), (.failed, true):
            return []
        case (.idle, false), (.failed, false):
            // Nothing is open; a failure is remembered until `reset()`.
            return []
        case (.connecting, false), (.connected, false), (.waitingForNetwork, false):
            phase = .idle
            return [.closeConnection(reason)]
        case (.waitingToRetry(_, let timer), false):
            phase = .idle
            return [.cancelTimer(timer), .closeConnection(reason)]
        }
    }

    /// The connection the tracker asked for is open.
    public mutating func opened() {
        switch phase {
        case .connecting(let failures, _): phase = .connected(failures: failures)
        default: phase = .connected(failures: 0)
        }
    }

    /// The connection ended or the attempt failed. `retriesAllowed` is the owner's word on
    /// whether to try again now (false in the background, or when it no longer wants one).
    public mutating func lost(_ loss: ConnectionLoss, retriesAllowed: Bool) -> [PolicyAction] {
        var actions: [PolicyAction] = []
        let failures: Int
        switch phase {
        case .connected(let before):
            if let uptime = loss.uptime, uptime >= stableAfter { failures = 0 } else { failures = before + 1 }
        case .connecting(let before, _):
            failures = before + 1
        case .waitingToRetry(let before, let timer):
            // A late report about a connection already given up on: the pending retry stands.
            _ = (before, timer)
            return []
        case .idle, .waitingForNetwork, .failed:
            return []
        }

        if loss.disposition == .doNotRetry {
            phase = .failed(loss.reason)
            return [.closeConnection(loss.reason)]
        }
        guard retriesAllowed else {
            phase = .idle
            return [.closeConnection(loss.reason)]
        }
        if backoff.isExhausted(afterFailedAttempts: failures) {
            let reason = DisconnectReason(.retriesExhausted, detail: "\(failures) failed attempts; last: \(loss.reason)")
            phase = .failed(reason)
            return [.closeConnection(reason)]
        }
        guard isNetworkReachable else {
            phase = .waitingForNetwork(failures: failures)
            return actions
        }
        switch loss.disposition {
        case .retryAfter(let delay):
            actions += armRetry(failures: failures, after: delay)
        case .retry where failures == 0:
            // A working connection was lost: the first retry is immediate.
            actions += startAttempt(failures: 0, isRetry: true)
        case .retry, .doNotRetry:
            let delay = backoff.delay(forAttempt: failures, unitRandom: jitter.next())
            actions += armRetry(failures: failures, after: powerSaving.retryDelay(delay, failures: failures, conditions: conditions))
        }
        return actions
    }

    /// A timer fired. Returns `nil` when it is not the tracker's timer, and no action for a
    /// stale fire.
    public mutating func timerFired(_ timer: PolicyTimer) -> [PolicyAction]? {
        guard timer.id == .reconnect else { return nil }
        guard case .waitingToRetry(let failures, let pending) = phase, pending == timer else { return [] }
        guard isNetworkReachable else {
            phase = .waitingForNetwork(failures: failures)
            return []
        }
        return startAttempt(failures: failures, isRetry: true)
    }

    /// The network became reachable (try now) or unreachable (stop trying).
    public mutating func networkChanged(isReachable: Bool) -> [PolicyAction] {
        isNetworkReachable = isReachable
        switch (phase, isReachable) {
        case (.waitingToRetry(let failures, let timer), false):
            phase = .waitingForNetwork(failures: failures)
            return [.cancelTimer(timer)]
        case (.waitingToRetry(let failures, let timer), true):
            return [.cancelTimer(timer)] + startAttempt(failures: failures, isRetry: true)
        case (.waitingForNetwork(let failures), true):
            return startAttempt(failures: failures, isRetry: true)
        default:
            return []
        }
    }

    /// The device's conditions changed. A reachable path on another interface than before
    /// (Wi-Fi ↔ cellular) is a new chance: a pending retry goes now, not at the end of its
    /// backoff. The first interface reported after none is not a change.
    public mutating func conditionsChanged(to conditions: DeviceConditions) -> [PolicyAction] {
        let previous = interface
        self.conditions = conditions
        guard conditions.isNetworkReachable, previous != .unknown, conditions.interface != previous,
            case .waitingToRetry(let failures, let timer) = phase
        else { return [] }
        return [.cancelTimer(timer)] + startAttempt(failures: failures, isRetry: true)
    }

    /// Drops a recovery in progress (a pending retry, a retry waiting for the network, or a
    /// retry attempt in flight) and reports `reason`. A connection that is open, or a first
    /// attempt the app asked for, is left alone.
    public mutating func stopRetrying(reason: DisconnectReason) -> [PolicyAction] {
        switch phase {
        case .waitingToRetry(_, let timer):
            phase = .idle
            return [.cancelTimer(timer), .closeConnection(reason)]
        case .waitingForNetwork, .connecting(_, true):
            phase = .idle
            return [.closeConnection(reason)]
        default:
            return []
        }
    }

    private mutating func startAttempt(failures: Int, isRetry: Bool) -> [PolicyAction] {
        guard isNetworkReachable else {
            phase = .waitingForNetwork(failures: failures)
            return []
        }
        phase = .connecting(failures: failures, isRetry: isRetry)
        return [.openConnection]
    }

    private mutating func armRetry(failures: Int, after delay: Duration) -> [PolicyAction] {
        let timer = timers.make(.reconnect)
        phase = .waitingToRetry(failures: failures, timer: timer)
        return [.armTimer(timer, after: delay)]
    }
}

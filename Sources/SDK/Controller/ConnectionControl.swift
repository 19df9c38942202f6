package import ConnectionPolicy

/// The controller's state machine: a policy, the facts it decides from (lifecycle, the device's
/// conditions), the link's phase (idle, opening, open — one attempt at a time), the timers and
/// the liveness, with every input a mutating call and every consequence a ``ControlEffect``. It does no I/O, reads no clock and
/// starts no task; ``ConnectionController`` and ``Session`` carry out its effects.
///
/// What it guarantees by construction: never a second attempt while one is opening or open; an
/// attempt the policy stops wanting is torn down; a report about an attempt that is no longer the
/// current one ("lost" twice, "opened" after a cancel) changes nothing; `reconnecting` only when
/// the policy will try again; every teardown of the policy's connection ends in `disconnected`
/// with the policy's reason.
package struct ConnectionControl: Sendable {
    /// Who the current attempt is for.
    package enum Owner: Hashable, Sendable {
        /// The policy asked for it.
        case policy
        /// The app opened it without the policy (a background refresh): the policy hears nothing
        /// of it until it asks for a connection itself, and then takes it over.
        case unowned
    }

    /// The link's phase.
    package enum Phase: Hashable, Sendable {
        case idle
        case opening(attempt: UInt64, Owner)
        case open(attempt: UInt64, Owner)

        package var attempt: UInt64? {
            switch self {
            case .idle: nil
            case .opening(let attempt, _), .open(let attempt, _): attempt
            }
        }

        package var owner: Owner? {
            switch self {
            case .idle: nil
            case .opening(_, let owner), .open(_, let owner): owner
            }
        }
    }

    package private(set) var policy: any SessionPolicy
    package private(set) var lifecycle: AppLifecycleState
    package private(set) var conditions: DeviceConditions
    /// How the connection's liveness is checked now (told to the performer as ``ControlEffect/liveness(_:)``).
    package private(set) var liveness: Liveness
    /// The settings' liveness, before the power saving rules and the policy.
    private let baseLiveness: Liveness
    private let powerSaving: PowerSaving
    /// The status last published (nil before the first).
    private var shown: ConnectionStatus?
    package private(set) var isStarted = false
    package private(set) var phase: Phase = .idle
    /// The timers armed now, with the policy's arming of each of its own.
    package private(set) var armed: [ControlTimer: PolicyTimer?] = [:]
    private let connectTimeout: Duration
    private var lastAttempt: UInt64 = 0
    private var effects: [ControlEffect] = []

    /// `liveness`: the settings' heartbeat and probe, which `powerSaving` and then the policy
    /// adapt to the lifecycle and the conditions.
    package init(
        policy: any SessionPolicy, lifecycle: AppLifecycleState, conditions: DeviceConditions, connectTimeout: Duration,
        liveness: Liveness = Liveness(heartbeat: nil, probesOnReturn: false), powerSaving: PowerSaving = .standard
    ) {
        self.policy = policy
        self.lifecycle = lifecycle
        self.conditions = conditions
        self.connectTimeout = connectTimeout
        self.baseLiveness = liveness
        self.powerSaving = powerSaving
        self.liveness = liveness
    }

    /// Indicates that the network is reachable, as far as the control knows.
    package var isNetworkReachable: Bool { conditions.isNetworkReachable }

    /// Indicates that the policy's reconnect timer is armed (a retry is pending).
    package var isRetryPending: Bool { armed[.policy(.reconnect)] != nil }

    /// Indicates that the current attempt is one the policy does not know of.
    package var isUnowned: Bool { phase.owner == .unowned }

    // MARK: Inputs

    /// Starts the policy from the facts, once; later calls do nothing.
    package mutating func start() -> [ControlEffect] {
        guard !isStarted else { return [] }
        isStarted = true
        let context = PolicyContext(lifecycle: lifecycle, isConnected: false, conditions: conditions)
        let (lifecycle, conditions) = (lifecycle, conditions)
        decide("start (\(lifecycle), \(conditions))") { $0.start(in: context) }
        decideLiveness(announce: true)
        return takeEffects()
    }

    /// The app's lifecycle state; a repeated state changes nothing.
    package mutating func setLifecycle(_ state: AppLifecycleState) -> [ControlEffect] {
        var effects = start()
        guard state != lifecycle else { return effects }
        let wasForeground = lifecycle.isForeground
        lifecycle = state
        decide("app is \(state)") { $0.lifecycleChanged(to: state) }
        decideLiveness()
        if state.isForeground, !wasForeground { probeIfOpen(because: "back in the foreground") }
        effects += takeEffects()
        return effects
    }

    /// Whether the network is reachable (the rest of the conditions as they are); a repeated
    /// value changes nothing.
    package mutating func setNetworkReachable(_ reachable: Bool) -> [ControlEffect] {
        var changed = conditions
        changed.isNetworkReachable = reachable
        return setConditions(changed)
    }

    /// The device's conditions; a repeated value changes nothing. A change of reachability goes
    /// to the policy as such first, then the whole value; then the liveness is decided again.
    package mutating func setConditions(_ new: DeviceConditions) -> [ControlEffect] {
        var effects = start()
        guard new != conditions else { return effects }
        let old = conditions
        let wasReachable = old.isNetworkReachable
        conditions = new
        let reachable = new.isNetworkReachable
        if reachable != wasReachable {
            decide("network \(reachable ? "reachable" : "unreachable")") { $0.networkReachabilityChanged(isReachable: reachable) }
            // Reconnecting with nothing open: what the session waits for now is the network.
            if !reachable, phase == .idle, case .reconnecting(let reason) = shown, reason.code != .networkUnreachable {
                show(.reconnecting(Self.waitingForNetwork(after: reason)))
            }
        }
        let actions = policy.conditionsChanged(to: new)
        if !actions.isEmpty || reachable == wasReachable { logDecision("conditions: \(new)", actions) }
        apply(actions)
        decideLiveness()
        if reachable, wasReachable, new.interface != old.interface, old.interface != .unknown {
            probeIfOpen(because: "the path changed (\(old.interface) → \(new.interface))")
        }
        effects += takeEffects()
        return effects
    }

    package mutating func connectRequested(_ event: String = "connect() called") -> [ControlEffect] {
        var effects = start()
        decide(event) { $0.connectRequested() }
        effects += takeEffects()
        return effects
    }

    package mutating func disconnectRequested() -> [ControlEffect] {
        var effects = start()
        decide("disconnect() called") { $0.disconnectRequested() }
        effects += takeEffects()
        return effects
    }

    package mutating func pingRequested() -> [ControlEffect] {
        var effects = start()
        decide("ping() called") { $0.pingRequested() }
        effects += takeEffects()
        return effects
    }

    /// `attempt`'s connection is open (and, for a session, authenticated). For an attempt that is
    /// no longer current — cancelled, superseded — it is torn down at once.
    package mutating func opened(_ attempt: UInt64) -> [ControlEffect] {
        guard case .opening(let current, let owner) = phase, current == attempt else {
            if phase.attempt != attempt {
                return [.log(.info, "attempt \(attempt) opened after it was given up: closing it"), .teardown(attempt: attempt, cause: .returned)]
            }
            return []
        }
        phase = .open(attempt: attempt, owner)
        disarm(.connectTimeout)
        show(.connected)
        if owner == .policy { decide("connection opened") { $0.connectionOpened() } }
        return takeEffects()
    }

    /// `attempt`'s connection ended (or its open failed) without anyone here asking. The
    /// performer has already let go of it. A report about any attempt but the current one is
    /// stale (lost twice, lost after a teardown) and changes nothing.
    package mutating func lost(_ attempt: UInt64, reason: DisconnectReason, disposition: RetryDisposition, uptime: Duration?) -> [ControlEffect] {
        guard phase.attempt == attempt, let owner = phase.owner else { return [] }
        phase = .idle
        disarm(.connectTimeout)
        guard owner == .policy else { return takeEffects() }
        let loss = ConnectionLoss(reason: reason, disposition: disposition, uptime: uptime)
        let actions = policy.connectionLost(loss)
        logDecision("connection lost (\(loss))", actions)
        // `reconnecting` only when the policy will try again; a final loss goes straight to
        // `disconnected` through its close action.
        let isFinal = actions.contains { if case .closeConnection = $0 { true } else { false } }
        if !isFinal { show(.reconnecting(isNetworkReachable ? reason : Self.waitingForNetwork(after: reason))) }
        apply(actions)
        return takeEffects()
    }

    /// A timer fired. The performer delivers only the latest arming's fire, never a cancelled one.
    package mutating func timerFired(_ timer: ControlTimer) -> [ControlEffect] {
        guard let arming = armed.removeValue(forKey: timer) else { return [] }
        switch timer {
        case .policy:
            if let policyTimer = arming { decide("timer \(policyTimer) fired") { $0.timerFired(policyTimer) } }
        case .connectTimeout:
            if case .opening(let attempt, _) = phase {
                effects.append(.connectTimedOut(attempt: attempt, reason: .error("connecting took longer than \(connectTimeout)")))
            }
        }
        return takeEffects()
    }

    /// Replaces the policy: the old one's timers are cancelled, an attempt opening is abandoned,
    /// an open connection is kept, and the new policy starts from the facts.
    package mutating func replacePolicy(_ newPolicy: any SessionPolicy) -> [ControlEffect] {
        var effects = start()
        for timer in armed.keys.sorted(by: { $0.description < $1.description }) {
            if case .policy = timer { disarm(timer) }
        }
        var wasLinked = true
        switch phase {
        case .open:
            break
        case .opening(let attempt, _):
            self.effects.append(.teardown(attempt: attempt, cause: .policyReplaced))
            phase = .idle
            disarm(.connectTimeout)
        case .idle:
            wasLinked = false
        }
        policy = newPolicy
        let context = PolicyContext(lifecycle: lifecycle, isConnected: phase != .idle, conditions: conditions)
        decide("replaced (\(lifecycle), connected: \(context.isConnected))") { $0.start(in: context) }
        if wasLinked, phase == .idle { show(.disconnected(.policyReplaced)) }
        decideLiveness()
        effects += takeEffects()
        return effects
    }

    /// Opens an attempt the policy does not know of (a background refresh), when nothing is
    /// open or opening; nil otherwise.
    package mutating func openUnowned() -> (attempt: UInt64, effects: [ControlEffect])? {
        guard phase == .idle else { return nil }
        let attempt = beginAttempt(.unowned)
        return (attempt, takeEffects())
    }

    /// Lets go of the attempt opened with ``openUnowned()``, unless the policy took it over.
    package mutating func returnUnowned() -> [ControlEffect] {
        guard let attempt = phase.attempt, phase.owner == .unowned else { return [] }
        phase = .idle
        disarm(.connectTimeout)
        effects.append(.teardown(attempt: attempt, cause: .returned))
        return takeEffects()
    }

    // MARK: Carrying out the policy

    /// A connection that is open is probed now, when the liveness says so.
    private mutating func probeIfOpen(because cause: String) {
        guard case .open = phase, liveness.probesOnReturn else { return }
        effects.append(.log(.debug, "probing the connection: \(cause)"))
        effects.append(.probe)
    }

    /// Decides the liveness from the facts: the settings' through the power saving rules, then
    /// the policy's say. A change (or, with `announce`, the first decision) becomes an effect.
    private mutating func decideLiveness(announce: Bool = false) {
        let proposed = powerSaving.liveness(base: baseLiveness, conditions: conditions)
        let context = PolicyContext(lifecycle: lifecycle, isConnected: phase != .idle, conditions: conditions)
        let decided = policy.liveness(proposed: proposed, in: context)
        guard decided != liveness || announce else { return }
        liveness = decided
        effects.append(.log(.debug, "liveness: \(decided) (\(conditions))"))
        effects.append(.liveness(decided))
    }

    private mutating func decide(_ event: String, _ body: (inout any SessionPolicy) -> [PolicyAction]) {
        let actions = body(&policy)
        logDecision(event, actions)
        apply(actions)
    }

    private mutating func logDecision(_ event: String, _ actions: [PolicyAction]) {
        let level: LogLevel = actions.isEmpty ? .debug : .info
        effects.append(.log(level, "policy \(policy.name): \(event) → \(actions.isEmpty ? "nothing" : actions.map(\.description).joined(separator: ", "))"))
    }

    private mutating func apply(_ actions: [PolicyAction]) {
        for action in actions {
            switch action {
            case .openConnection:
                switch phase {
                case .idle:
                    beginAttempt(.policy)
                case .opening(let attempt, .unowned):
                    phase = .opening(attempt: attempt, .policy)
                case .open(let attempt, .unowned):
                    // The policy takes over a connection opened without it.
                    phase = .open(attempt: attempt, .policy)
                    decide("connection opened (taken over)") { $0.connectionOpened() }
                case .opening(_, .policy), .open(_, .policy):
                    break  // Never two.
                }
            case .closeConnection(let reason):
                if let attempt = phase.attempt {
                    effects.append(.teardown(attempt: attempt, cause: .policyClosed(reason)))
                    phase = .idle
                    disarm(.connectTimeout)
                }
                effects.append(.policyClosed(reason))
                show(.disconnected(reason))
            case .armTimer(let timer, let delay):
                armed[.policy(timer.id)] = .some(timer)
                effects.append(.arm(.policy(timer.id), after: delay))
            case .cancelTimer(let timer):
                if armed[.policy(timer.id)] == .some(timer) { disarm(.policy(timer.id)) }
            }
        }
    }

    @discardableResult
    private mutating func beginAttempt(_ owner: Owner) -> UInt64 {
        lastAttempt += 1
        phase = .opening(attempt: lastAttempt, owner)
        effects.append(.open(attempt: lastAttempt))
        armed[.connectTimeout] = .some(nil)
        effects.append(.arm(.connectTimeout, after: connectTimeout))
        show(.connecting)
        return lastAttempt
    }

    /// Publishes `status` and remembers it.
    private mutating func show(_ status: ConnectionStatus) {
        shown = status
        effects.append(.status(status))
    }

    /// The reason a reconnect waits for the network, naming what ended the connection.
    private static func waitingForNetwork(after reason: DisconnectReason) -> DisconnectReason {
        DisconnectReason(.networkUnreachable, detail: "waiting for the network; the connection ended: \(reason)")
    }

    private mutating func disarm(_ timer: ControlTimer) {
        guard armed.removeValue(forKey: timer) != nil else { return }
        effects.append(.cancel(timer))
    }

    private mutating func takeEffects() -> [ControlEffect] {
        defer { effects = [] }
        return effects
    }
}

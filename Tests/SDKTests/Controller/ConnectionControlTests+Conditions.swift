import ConnectionPolicy
@testable import SDK
import Testing

/// The control's device conditions and liveness, table by table: the conditions go to the
/// policy as one value, and every input that changes what the liveness should be says so once.
@Suite("ConnectionControl: conditions and liveness")
struct ConnectionControlConditionsTests {
    /// The settings' liveness, as the control is given it.
    static let settings = Liveness(heartbeat: .init(interval: .seconds(25), timeout: .seconds(10)))
    /// What the standard rules make of it: a heartbeat the traffic made needless is skipped...
    static let base = Liveness(heartbeat: .init(interval: .seconds(25), timeout: .seconds(10)), skipsHeartbeatWhenAlive: true)
    /// ...and, while the device asks to save, stretched.
    static let stretched = Liveness(heartbeat: .init(interval: .seconds(50), timeout: .seconds(10)), keepAliveStretch: 2, skipsHeartbeatWhenAlive: true)
    static let auto = AutoPolicy(jitter: .fixed(0))

    func control(_ policy: any SessionPolicy = Self.auto, saving: PowerSaving = .standard, conditions: DeviceConditions = .unconstrained) -> ConnectionControl {
        ConnectionControl(policy: policy, lifecycle: .active, conditions: conditions, connectTimeout: .seconds(10), liveness: Self.settings, powerSaving: saving)
    }

    static func livenessEffects(_ effects: [ControlEffect]) -> [Liveness] {
        effects.compactMap { if case .liveness(let liveness) = $0 { liveness } else { nil } }
    }

    @Test("the start announces the liveness for the conditions the session starts in")
    func start() {
        var plain = control()
        #expect(Self.livenessEffects(plain.start()) == [Self.base])
        var expensive = control(conditions: DeviceConditions(isExpensive: true, interface: .cellular))
        #expect(Self.livenessEffects(expensive.start()) == [Self.stretched])
        #expect(expensive.liveness == Self.stretched)
    }

    @Test(
        "each change of the conditions that changes the liveness says so once; a change that does not, or a repeated value, says nothing",
        arguments: [
            ([DeviceConditions(isLowPowerModeEnabled: true)], [[stretched]]),
            ([DeviceConditions(isLowPowerModeEnabled: true), DeviceConditions(isLowPowerModeEnabled: true)], [[stretched], []]),
            ([DeviceConditions(isLowPowerModeEnabled: true), DeviceConditions(isLowPowerModeEnabled: true, thermalState: .serious)], [[stretched], []]),
            ([DeviceConditions(isConstrained: true), DeviceConditions(interface: .wifi)], [[stretched], [base]]),
            ([DeviceConditions(interface: .wifi), DeviceConditions(interface: .cellular)], [[], []]),
        ]
    )
    func changes(steps: [DeviceConditions], expected: [[Liveness]]) {
        var control = control()
        _ = control.start()
        let seen = steps.map { Self.livenessEffects(control.setConditions($0)) }
        #expect(seen == expected)
    }

    @Test("PowerSaving.off: the settings' liveness whatever the conditions")
    func off() {
        var control = control(saving: .off)
        _ = control.start()
        #expect(Self.livenessEffects(control.setConditions(DeviceConditions(isConstrained: true, isExpensive: true, isLowPowerModeEnabled: true))) == [])
        #expect(control.liveness == Self.settings)
    }

    @Test("a change of reachability reaches the policy as before (unreachable, no retry; reachable, a retry at once), with the rest of the conditions")
    func reachability() {
        let policy = RecordingPolicy()
        var control = control(policy)
        _ = control.start()
        _ = control.setConditions(DeviceConditions(isNetworkReachable: false))
        _ = control.setConditions(DeviceConditions(isNetworkReachable: true, isExpensive: true, interface: .cellular))
        _ = control.setNetworkReachable(true)
        _ = control.setNetworkReachable(false)
        #expect(control.policy.name == "recording")
        let recorded = (control.policy as? RecordingPolicy)?.events ?? []
        #expect(recorded == [
            "reachable false", "conditions unreachable",
            "reachable true", "conditions reachable, cellular, expensive",
            "reachable false", "conditions unreachable, cellular, expensive",
        ])
    }

    static func probes(_ effects: [ControlEffect]) -> Int {
        effects.filter { $0 == .probe }.count
    }

    @Test("a probe: back in the foreground, or on another interface of a reachable network, with a connection open; never while idle or opening")
    func probe() {
        var control = control()
        _ = control.start()
        #expect(Self.probes(control.setConditions(DeviceConditions(interface: .wifi))) == 0, "opening: nothing to probe")
        _ = control.opened(1)
        #expect(Self.probes(control.setConditions(DeviceConditions(interface: .cellular))) == 1)
        #expect(Self.probes(control.setConditions(DeviceConditions(isExpensive: true, interface: .cellular))) == 0, "the same interface")
        #expect(Self.probes(control.setConditions(DeviceConditions(isNetworkReachable: false))) == 0)
        #expect(Self.probes(control.setConditions(DeviceConditions(interface: .wifi))) == 0, "reachable again: the reconnect, not a probe")
        #expect(Self.probes(control.setLifecycle(.inactive)) == 0)
        #expect(Self.probes(control.setLifecycle(.active)) == 0, "inactive is foreground: no return")
    }

    @Test("back in the foreground with a connection kept open (Auto's grace): one probe; without the heartbeat, none")
    func probeOnReturn() {
        var control = ConnectionControl(
            policy: AutoPolicy(.init(backgroundGrace: .seconds(30)), jitter: .fixed(0)), lifecycle: .active, conditions: .unconstrained,
            connectTimeout: .seconds(10), liveness: Self.base
        )
        _ = control.start()
        _ = control.opened(1)
        #expect(Self.probes(control.setLifecycle(.background)) == 0)
        #expect(Self.probes(control.setLifecycle(.active)) == 1)
        var quiet = ConnectionControl(
            policy: AutoPolicy(.init(backgroundGrace: .seconds(30)), jitter: .fixed(0)), lifecycle: .active, conditions: .unconstrained,
            connectTimeout: .seconds(10), liveness: Liveness(heartbeat: nil, probesOnReturn: false)
        )
        _ = quiet.start()
        _ = quiet.opened(1)
        _ = quiet.setLifecycle(.background)
        #expect(Self.probes(quiet.setLifecycle(.active)) == 0)
    }

    @Test("the policy has the last word on the liveness, asked again on every lifecycle change and when it replaces another")
    func policyDecides() {
        var control = control()
        _ = control.start()
        let quiet = Liveness(heartbeat: nil, probesOnReturn: false)
        #expect(Self.livenessEffects(control.replacePolicy(RecordingPolicy(quietInBackground: true))) == [])
        #expect(Self.livenessEffects(control.setLifecycle(.background)) == [quiet])
        #expect(Self.livenessEffects(control.setLifecycle(.active)) == [Self.base])
        #expect(Self.livenessEffects(control.replacePolicy(Self.auto)) == [])
        _ = control.setLifecycle(.background)
        #expect(control.liveness == Self.base, "Auto keeps what it is proposed")
    }
}

/// A policy that records the conditions it hears of, and (when asked to) turns the liveness
/// off in the background.
private struct RecordingPolicy: SessionPolicy {
    var events: [String] = []
    var quietInBackground = false
    var name: String { "recording" }

    mutating func start(in context: PolicyContext) -> [PolicyAction] { [] }
    mutating func lifecycleChanged(to state: AppLifecycleState) -> [PolicyAction] { [] }
    mutating func connectRequested() -> [PolicyAction] { [] }
    mutating func disconnectRequested() -> [PolicyAction] { [] }
    mutating func pingRequested() -> [PolicyAction] { [] }
    mutating func connectionOpened() -> [PolicyAction] { [] }
    mutating func connectionLost(_ loss: ConnectionLoss) -> [PolicyAction] { [] }
    mutating func timerFired(_ timer: PolicyTimer) -> [PolicyAction] { [] }

    mutating func networkReachabilityChanged(isReachable: Bool) -> [PolicyAction] {
        events.append("reachable \(isReachable)")
        return []
    }

    mutating func conditionsChanged(to conditions: DeviceConditions) -> [PolicyAction] {
        events.append("conditions \(conditions)")
        return []
    }

    func liveness(proposed: Liveness, in context: PolicyContext) -> Liveness {
        quietInBackground && !context.lifecycle.isForeground ? Liveness(heartbeat: nil, probesOnReturn: false) : proposed
    }
}

import ConnectionPolicy
import Testing

/// The power saving rules alone, table by table: conditions in, liveness out.
@Suite("PowerSaving and DeviceConditions")
struct PowerSavingTests {
    static let base = Liveness(heartbeat: .init(interval: .seconds(25), timeout: .seconds(10)))

    @Test(
        "the device asks to save on a constrained or expensive path, in Low Power Mode, at a serious or critical thermal state; not otherwise",
        arguments: [
            (DeviceConditions(), false),
            (DeviceConditions(interface: .wifi), false),
            (DeviceConditions(isNetworkReachable: false), false),
            (DeviceConditions(isConstrained: true), true),
            (DeviceConditions(isExpensive: true, interface: .cellular), true),
            (DeviceConditions(isLowPowerModeEnabled: true), true),
            (DeviceConditions(thermalState: .fair), false),
            (DeviceConditions(thermalState: .serious), true),
            (DeviceConditions(thermalState: .critical), true),
        ]
    )
    func asksToSave(conditions: DeviceConditions, expected: Bool) {
        #expect(conditions.asksToSave == expected, "\(conditions)")
    }

    @Test(
        "standard: the heartbeat doubled while the device asks to save, to at most 55 s; an interval already longer is kept; the timeout and the probe unchanged",
        arguments: [
            (Duration.seconds(25), DeviceConditions(), Duration.seconds(25)),
            (.seconds(25), DeviceConditions(isConstrained: true), .seconds(50)),
            (.seconds(25), DeviceConditions(isExpensive: true), .seconds(50)),
            (.seconds(25), DeviceConditions(isLowPowerModeEnabled: true), .seconds(50)),
            (.seconds(25), DeviceConditions(thermalState: .critical), .seconds(50)),
            (.seconds(25), DeviceConditions(isConstrained: true, isExpensive: true, isLowPowerModeEnabled: true), .seconds(50)),
            (.seconds(40), DeviceConditions(isExpensive: true), .seconds(55)),
            (.seconds(90), DeviceConditions(isExpensive: true), .seconds(90)),
            (.seconds(5), DeviceConditions(isLowPowerModeEnabled: true), .seconds(10)),
        ]
    )
    func standard(interval: Duration, conditions: DeviceConditions, expected: Duration) {
        let base = Liveness(heartbeat: .init(interval: interval, timeout: .seconds(10)), probesOnReturn: true)
        let liveness = PowerSaving.standard.liveness(base: base, conditions: conditions)
        #expect(liveness.heartbeat?.interval == expected)
        #expect(liveness.heartbeat?.timeout == .seconds(10))
        #expect(liveness.probesOnReturn)
        #expect(liveness.keepAliveStretch == (conditions.asksToSave ? 2 : 1))
        #expect(liveness.skipsHeartbeatWhenAlive, "in every condition: the bound is kept")
    }

    @Test(
        "on an expensive path the backoff doubles from the third failed attempt in a row; not before, not on another path, not when off",
        arguments: [
            (PowerSaving.standard, DeviceConditions(isExpensive: true), 1, Duration.seconds(8)),
            (.standard, DeviceConditions(isExpensive: true), 2, .seconds(8)),
            (.standard, DeviceConditions(isExpensive: true), 3, .seconds(16)),
            (.standard, DeviceConditions(isExpensive: true, isLowPowerModeEnabled: true), 7, .seconds(16)),
            (.standard, DeviceConditions(isConstrained: true, isLowPowerModeEnabled: true), 7, .seconds(8)),
            (.off, DeviceConditions(isExpensive: true), 7, .seconds(8)),
            (PowerSaving(expensiveBackoffAfterFailures: 1, expensiveBackoffStretch: 3), DeviceConditions(isExpensive: true), 1, .seconds(24)),
        ]
    )
    func expensiveBackoff(rules: PowerSaving, conditions: DeviceConditions, failures: Int, expected: Duration) {
        #expect(rules.retryDelay(.seconds(8), failures: failures, conditions: conditions) == expected)
    }

    @Test("off: the settings' liveness in every condition; with no heartbeat, only the protocol's keep-alive stretches")
    func offAndNone() {
        let saving = DeviceConditions(isConstrained: true, isExpensive: true, isLowPowerModeEnabled: true, thermalState: .critical)
        #expect(PowerSaving.off.liveness(base: Self.base, conditions: saving) == Self.base)
        let none = Liveness(heartbeat: nil, probesOnReturn: false)
        #expect(PowerSaving.off.liveness(base: none, conditions: saving) == none)
        let protocolOnly = PowerSaving.standard.liveness(base: none, conditions: saving)
        #expect(protocolOnly.heartbeat == nil && !protocolOnly.probesOnReturn)
        #expect(protocolOnly.keepAliveStretch == 2, "no heartbeat of the session's own: the protocol's keep-alive is still stretched")
    }

    @Test("a stretch below 1 counts as 1 (never a shorter heartbeat); the liveness bound is interval plus timeout")
    func edges() {
        let saving = DeviceConditions(isLowPowerModeEnabled: true)
        #expect(PowerSaving(heartbeatStretch: 0).liveness(base: Self.base, conditions: saving).heartbeat == Self.base.heartbeat)
        #expect(PowerSaving.standard.liveness(base: Self.base, conditions: saving).heartbeat?.bound == .seconds(60))
    }

    @Test("the policy context's reachability is its conditions' reachability, read and written")
    func contextReachability() {
        var context = PolicyContext(lifecycle: .active, isNetworkReachable: false)
        #expect(!context.conditions.isNetworkReachable)
        context.isNetworkReachable = true
        #expect(context.conditions == .unconstrained)
    }
}

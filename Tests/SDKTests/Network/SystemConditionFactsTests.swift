import ConnectionPolicy
@testable import SDK
import Testing

/// What `SystemConditionsSource` makes of `NWPath` and `ProcessInfo`, table by table (the glue on
/// Apple platforms only reads the frameworks into these facts).
@Suite("The system's conditions: a path and power, as facts")
struct SystemConditionFactsTests {
    static func path(
        satisfied: Bool = true, constrained: Bool = false, expensive: Bool = false, wifi: Bool = false, cellular: Bool = false, wired: Bool = false
    ) -> NetworkPathFacts {
        NetworkPathFacts(
            isSatisfied: satisfied, isConstrained: constrained, isExpensive: expensive, usesWiFi: wifi, usesCellular: cellular, usesWiredEthernet: wired
        )
    }

    @Test(
        "the interface a path is on: Wi-Fi before cellular before wired; another when satisfied over none of them; unknown when not satisfied",
        arguments: [
            (path(wifi: true), NetworkInterface.wifi), (path(wifi: true, cellular: true), .wifi), (path(cellular: true), .cellular),
            (path(cellular: true, wired: true), .cellular), (path(wired: true), .wiredEthernet), (path(), .other),
            (path(satisfied: false), .unknown), (path(satisfied: false, wifi: true), .wifi),
        ]
    )
    func interface(_ facts: NetworkPathFacts, _ expected: NetworkInterface) {
        #expect(facts.applied(to: DeviceConditions()).interface == expected)
    }

    @Test("reachability, Low Data Mode and cost come from the path; power stays as it was")
    func pathFacts() {
        let before = DeviceConditions(isNetworkReachable: false, isLowPowerModeEnabled: true, thermalState: .serious)
        let after = Self.path(constrained: true, expensive: true, cellular: true).applied(to: before)
        #expect(after.isNetworkReachable && after.isConstrained && after.isExpensive)
        #expect(after.isLowPowerModeEnabled && after.thermalState == .serious, "power is ProcessInfo's, not the path's")
        let lost = Self.path(satisfied: false).applied(to: after)
        #expect(!lost.isNetworkReachable && !lost.isConstrained && !lost.isExpensive && lost.interface == .unknown)
    }

    @Test(
        "ProcessInfo.ThermalState's raw values 0…3; one a later system adds counts as critical",
        arguments: [(0, ThermalState.nominal), (1, .fair), (2, .serious), (3, .critical), (4, .critical), (-1, .critical)]
    )
    func thermal(_ raw: Int, _ expected: ThermalState) {
        #expect(ThermalState(systemRawValue: raw) == expected)
    }
}

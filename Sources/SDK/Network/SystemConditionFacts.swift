import ConnectionPolicy

/// What the system says of the network path (`NWPath`) and of power (`ProcessInfo`), as plain
/// facts: what Tether makes of them is decided here, where Linux compiles and tests it, and
/// `SystemConditionsSource` only reads the frameworks.
struct NetworkPathFacts: Equatable, Sendable {
    /// `NWPath.status == .satisfied`.
    var isSatisfied: Bool
    var isConstrained: Bool
    var isExpensive: Bool
    /// `NWPath.usesInterfaceType(_:)` for `.wifi`, `.cellular`, `.wiredEthernet`.
    var usesWiFi: Bool
    var usesCellular: Bool
    var usesWiredEthernet: Bool

    /// `conditions` with this path: reachable while satisfied, Low Data Mode and cost as the path
    /// has them, and the interface — Wi-Fi before cellular before wired (a path that uses Wi-Fi
    /// and cellular is on Wi-Fi), another one when satisfied over none of them, unknown when not
    /// satisfied at all.
    func applied(to conditions: DeviceConditions) -> DeviceConditions {
        var conditions = conditions
        conditions.isNetworkReachable = isSatisfied
        conditions.isConstrained = isConstrained
        conditions.isExpensive = isExpensive
        conditions.interface =
            if usesWiFi { .wifi } else if usesCellular { .cellular } else if usesWiredEthernet { .wiredEthernet } else if isSatisfied { .other } else { .unknown }
        return conditions
    }
}

extension ThermalState {
    /// The state `ProcessInfo.ThermalState`'s raw value stands for (0 nominal … 3 critical); a
    /// value a later system adds counts as critical — the side that saves the most.
    init(systemRawValue rawValue: Int) {
        self =
            switch rawValue {
            case 0: .nominal
            case 1: .fair
            case 2: .serious
            default: .critical
            }
    }
}

/// The device's conditions that bear on what staying connected costs: whether the network is
/// reachable and what kind of path it is (Low Data Mode's constrained path, an expensive
/// cellular or hotspot path), Low Power Mode and the thermal state. One value: a session hands
/// every change of any of them to its policy and to the liveness decision at once.
public struct DeviceConditions: Hashable, Sendable, CustomStringConvertible {
    /// Indicates that the network is reachable (as far as the session knows).
    public var isNetworkReachable: Bool
    /// Indicates that the path is constrained: Low Data Mode (`NWPath.isConstrained`).
    public var isConstrained: Bool
    /// Indicates that the path is expensive: cellular, or a personal hotspot (`NWPath.isExpensive`).
    public var isExpensive: Bool
    /// The kind of interface the path uses.
    public var interface: NetworkInterface
    /// Indicates that Low Power Mode is on (`ProcessInfo.isLowPowerModeEnabled`).
    public var isLowPowerModeEnabled: Bool
    /// How hot the device is (`ProcessInfo.thermalState`).
    public var thermalState: ThermalState

    /// The conditions as the system reports them (every argument has the unconstrained default).
    public init(
        isNetworkReachable: Bool = true, isConstrained: Bool = false, isExpensive: Bool = false, interface: NetworkInterface = .unknown,
        isLowPowerModeEnabled: Bool = false, thermalState: ThermalState = .nominal
    ) {
        self.isNetworkReachable = isNetworkReachable
        self.isConstrained = isConstrained
        self.isExpensive = isExpensive
        self.interface = interface
        self.isLowPowerModeEnabled = isLowPowerModeEnabled
        self.thermalState = thermalState
    }

    /// A reachable network with nothing to save for: what a session assumes until told otherwise.
    public static let unconstrained = DeviceConditions()

    /// Indicates that the device asks apps to save: a constrained or expensive path, Low Power
    /// Mode, or a device at a serious or critical thermal state.
    public var asksToSave: Bool {
        isConstrained || isExpensive || isLowPowerModeEnabled || thermalState >= .serious
    }

    public var description: String {
        var facts = [isNetworkReachable ? "reachable" : "unreachable"]
        if interface != .unknown { facts.append(interface.description) }
        if isConstrained { facts.append("constrained") }
        if isExpensive { facts.append("expensive") }
        if isLowPowerModeEnabled { facts.append("Low Power Mode") }
        if thermalState != .nominal { facts.append("thermal \(thermalState)") }
        return facts.joined(separator: ", ")
    }
}

/// The kind of interface a network path uses. A struct rather than an enum: kinds may be added
/// without breaking a `switch` in an app.
public struct NetworkInterface: Hashable, Sendable, CustomStringConvertible {
    /// The kind's name (`"wifi"`).
    public let name: String

    /// An interface by its name (`NWInterface.InterfaceType`'s, or your own).
    public init(name: String) { self.name = name }

    /// Wi-Fi.
    public static let wifi = NetworkInterface(name: "wifi")
    /// A cellular network.
    public static let cellular = NetworkInterface(name: "cellular")
    /// Wired Ethernet.
    public static let wiredEthernet = NetworkInterface(name: "wired")
    /// Loopback, or another kind.
    public static let other = NetworkInterface(name: "other")
    /// Not known (no path yet, or a source that does not say).
    public static let unknown = NetworkInterface(name: "unknown")

    public var description: String { name }
}

/// How hot the device is, as `ProcessInfo.ThermalState` grades it. Ordered: `nominal` is the
/// coolest. A struct rather than an enum, so that a grade added later breaks no `switch`.
public struct ThermalState: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The grade, 0 (nominal) to 3 (critical).
    public let level: Int
    private let name: String

    private init(_ level: Int, _ name: String) {
        self.level = level
        self.name = name
    }

    /// No thermal pressure.
    public static let nominal = ThermalState(0, "nominal")
    /// Slightly raised; the system is not yet limiting work.
    public static let fair = ThermalState(1, "fair")
    /// High: the system is limiting work, and the standard power-saving rules stretch the
    /// heartbeat.
    public static let serious = ThermalState(2, "serious")
    /// Critical: as serious, and the app should do as little as it can.
    public static let critical = ThermalState(3, "critical")

    public static func < (lhs: ThermalState, rhs: ThermalState) -> Bool { lhs.level < rhs.level }

    public var description: String { name }
}

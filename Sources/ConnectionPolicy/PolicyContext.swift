/// The facts a policy starts from: when the session starts, and when the app replaces the
/// policy at run time.
public struct PolicyContext: Hashable, Sendable {
    /// The app's lifecycle state now.
    public var lifecycle: AppLifecycleState
    /// Indicates that a connection is open now.
    public var isConnected: Bool
    /// The device's conditions now: the network and its path, Low Power Mode, the thermal state.
    public var conditions: DeviceConditions

    /// Indicates that the network is reachable (as far as the session knows):
    /// `conditions.isNetworkReachable`.
    public var isNetworkReachable: Bool {
        get { conditions.isNetworkReachable }
        set { conditions.isNetworkReachable = newValue }
    }

    /// A context with only reachability known (every other condition unconstrained).
    public init(lifecycle: AppLifecycleState, isConnected: Bool = false, isNetworkReachable: Bool = true) {
        self.init(lifecycle: lifecycle, isConnected: isConnected, conditions: DeviceConditions(isNetworkReachable: isNetworkReachable))
    }

    /// A context with the device's whole conditions.
    public init(lifecycle: AppLifecycleState, isConnected: Bool = false, conditions: DeviceConditions) {
        self.lifecycle = lifecycle
        self.isConnected = isConnected
        self.conditions = conditions
    }
}

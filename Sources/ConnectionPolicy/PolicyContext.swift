/// The facts a policy starts from: when the session starts, and when the app replaces the
/// policy at run time.
public struct PolicyContext: Hashable, Sendable {
    /// The app's lifecycle state now.
    public var lifecycle: AppLifecycleState
    /// Indicates that a connection is open now.
    public var isConnected: Bool
    /// Indicates that the network is reachable (as far as the session knows).
    public var isNetworkReachable: Bool

    public init(lifecycle: AppLifecycleState, isConnected: Bool = false, isNetworkReachable: Bool = true) {
        self.lifecycle = lifecycle
        self.isConnected = isConnected
        self.isNetworkReachable = isNetworkReachable
    }
}

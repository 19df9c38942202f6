/// Where a session learns whether the network is reachable.
public protocol NetworkMonitor: Sendable {
    /// Reachable now, as far as the monitor knows.
    var isReachable: Bool { get }

    /// Hands the reachability now, then every change, to `handler`, awaiting each, until the
    /// calling task is cancelled.
    func deliverChanges(to handler: @escaping @Sendable (Bool) async -> Void) async
}

/// A network monitor that changes only when told: for Linux, and for tests.
public final class ManualNetworkMonitor: NetworkMonitor {
    private let hub: ChangeHub<Bool>

    /// A monitor that starts reachable (or not) and changes only when you say so.
    public init(isReachable: Bool = true) {
        hub = ChangeHub(isReachable)
    }

    public var isReachable: Bool { hub.value }

    /// Sets reachability and returns once every session listening has handled it.
    public func send(isReachable: Bool) async {
        await hub.send(isReachable)
    }

    public func deliverChanges(to handler: @escaping @Sendable (Bool) async -> Void) async {
        await hub.deliver(to: handler)
    }
}

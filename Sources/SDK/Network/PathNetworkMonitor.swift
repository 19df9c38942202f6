#if canImport(Network)
public import Dispatch
import Network

/// Reachability from `NWPathMonitor` (Apple platforms): reachable while the path is
/// `.satisfied`. Thin on purpose: the delivery logic is `ChangeHub`'s, tested everywhere.
public final class PathNetworkMonitor: NetworkMonitor {
    /// `@unchecked Sendable`: the monitor is configured once in `init` and afterwards only
    /// `cancel()`ed from `deinit`; `NWPathMonitor` calls its handler on its own queue.
    private struct Monitor: @unchecked Sendable {
        let monitor: NWPathMonitor
    }

    private let hub = ChangeHub(true)
    private let monitor: Monitor

    public init(queue: DispatchQueue = DispatchQueue(label: "Tether.PathNetworkMonitor")) {
        let monitor = NWPathMonitor()
        let hub = self.hub
        monitor.pathUpdateHandler = { path in hub.post(path.status == .satisfied) }
        monitor.start(queue: queue)
        self.monitor = Monitor(monitor: monitor)
    }

    deinit { monitor.monitor.cancel() }

    public var isReachable: Bool { hub.value }

    public func deliverChanges(to handler: @escaping @Sendable (Bool) async -> Void) async {
        await hub.deliver(to: handler)
    }
}
#endif

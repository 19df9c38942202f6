#if canImport(Network)
public import Dispatch
import Foundation
import Network
public import ConnectionPolicy

/// The device's conditions from the system (Apple platforms): the path from `NWPathMonitor`
/// (`status`, `isConstrained`, `isExpensive`, `usesInterfaceType`) and power from
/// `ProcessInfo` (`isLowPowerModeEnabled`, `thermalState`, each with its change notification).
/// Thin on purpose: the delivery logic is `ChangeHub`'s, and what the session does with the
/// conditions is the control's, both tested everywhere.
public final class SystemConditionsSource: DeviceConditionsSource {
    /// `@unchecked Sendable`: configured once in `init`, afterwards only cancelled and removed
    /// from `deinit`; `NWPathMonitor` calls its handler on its own queue, and the notification
    /// observers are called on `queue`.
    private struct Observers: @unchecked Sendable {
        let monitor: NWPathMonitor
        let tokens: [any NSObjectProtocol]
    }

    private let hub: ChangeHub<DeviceConditions>
    private let observers: Observers

    public init(queue: DispatchQueue = DispatchQueue(label: "Tether.SystemConditionsSource")) {
        let hub = ChangeHub(Self.power(DeviceConditions()))
        let monitor = NWPathMonitor()
        monitor.pathUpdateHandler = { path in
            var conditions = Self.power(hub.value)
            conditions.isNetworkReachable = path.status == .satisfied
            conditions.isConstrained = path.isConstrained
            conditions.isExpensive = path.isExpensive
            conditions.interface = Self.interface(of: path)
            hub.post(conditions)
        }
        monitor.start(queue: queue)
        let center = NotificationCenter.default
        let names: [Notification.Name] = [.NSProcessInfoPowerStateDidChange, ProcessInfo.thermalStateDidChangeNotification]
        let operationQueue = OperationQueue()
        operationQueue.underlyingQueue = queue
        let tokens = names.map { name in
            center.addObserver(forName: name, object: nil, queue: operationQueue) { _ in hub.post(Self.power(hub.value)) }
        }
        self.hub = hub
        self.observers = Observers(monitor: monitor, tokens: tokens)
    }

    deinit {
        observers.monitor.cancel()
        for token in observers.tokens { NotificationCenter.default.removeObserver(token) }
    }

    public var conditions: DeviceConditions { hub.value }

    public func deliverChanges(to handler: @escaping @Sendable (DeviceConditions) async -> Void) async {
        await hub.deliver(to: handler)
    }

    /// `conditions` with Low Power Mode and the thermal state as `ProcessInfo` has them now.
    private static func power(_ conditions: DeviceConditions) -> DeviceConditions {
        var conditions = conditions
        let info = ProcessInfo.processInfo
        conditions.isLowPowerModeEnabled = info.isLowPowerModeEnabled
        conditions.thermalState =
            switch info.thermalState {
            case .nominal: .nominal
            case .fair: .fair
            case .serious: .serious
            case .critical: .critical
            @unknown default: .critical
            }
        return conditions
    }

    private static func interface(of path: NWPath) -> NetworkInterface {
        if path.usesInterfaceType(.wifi) { return .wifi }
        if path.usesInterfaceType(.cellular) { return .cellular }
        if path.usesInterfaceType(.wiredEthernet) { return .wiredEthernet }
        return path.status == .satisfied ? .other : .unknown
    }
}
#endif

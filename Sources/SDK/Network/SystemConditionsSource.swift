#if canImport(Network)
public import Dispatch
import Foundation
import Network
public import ConnectionPolicy

/// The device's conditions from the system (Apple platforms): the path from `NWPathMonitor`
/// (`status`, `isConstrained`, `isExpensive`, `usesInterfaceType`) and power from
/// `ProcessInfo` (`isLowPowerModeEnabled`, `thermalState`, each with its change notification).
/// Thin on purpose: what the path and power mean is `NetworkPathFacts`' and `ThermalState(systemRawValue:)`'s,
/// the delivery is `ChangeHub`'s, and what the session does with the conditions is the control's —
/// all tested everywhere.
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
        monitor.pathUpdateHandler = { path in hub.post(Self.facts(of: path).applied(to: Self.power(hub.value))) }
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
        conditions.thermalState = ThermalState(systemRawValue: info.thermalState.rawValue)
        return conditions
    }

    /// What `path` says, read from the framework (what follows from it: ``NetworkPathFacts``).
    private static func facts(of path: NWPath) -> NetworkPathFacts {
        NetworkPathFacts(
            isSatisfied: path.status == .satisfied, isConstrained: path.isConstrained, isExpensive: path.isExpensive,
            usesWiFi: path.usesInterfaceType(.wifi), usesCellular: path.usesInterfaceType(.cellular),
            usesWiredEthernet: path.usesInterfaceType(.wiredEthernet)
        )
    }
}
#endif

import ConnectionPolicy

extension DiscardingTaskGroup {
    /// Forwards every change of a lifecycle source, a network monitor and a conditions source
    /// (any may be absent) to `appState`, `reachable` and `conditions`, from children of this
    /// group, until `stop` fires: how ``Session`` and ``ConnectionController`` both listen to
    /// the platform.
    mutating func forwardChanges(
        of lifecycle: (any LifecycleSource)?, _ network: (any NetworkMonitor)?, _ source: (any DeviceConditionsSource)?, until stop: OneShot,
        appState: @escaping @Sendable (AppLifecycleState) async -> Void, reachable: @escaping @Sendable (Bool) async -> Void,
        conditions: @escaping @Sendable (DeviceConditions) async -> Void
    ) {
        if let source {
            addTask { _ = await race({ await source.deliverChanges(to: conditions) }, cancelledBy: stop) }
        }
        if let lifecycle {
            addTask { _ = await race({ await lifecycle.deliverChanges(to: appState) }, cancelledBy: stop) }
        }
        if let network {
            addTask { _ = await race({ await network.deliverChanges(to: reachable) }, cancelledBy: stop) }
        }
    }
}

import ConnectionPolicy

extension DiscardingTaskGroup {
    /// Forwards every change of a lifecycle source and of a network monitor (either may be
    /// absent) to `appState` and `reachable`, from children of this group, until `stop` fires:
    /// how ``Session`` and ``ConnectionController`` both listen to the platform.
    mutating func forwardChanges(
        of lifecycle: (any LifecycleSource)?, _ network: (any NetworkMonitor)?, until stop: OneShot,
        appState: @escaping @Sendable (AppLifecycleState) async -> Void, reachable: @escaping @Sendable (Bool) async -> Void
    ) {
        if let lifecycle {
            addTask { _ = await race({ await lifecycle.deliverChanges(to: appState) }, cancelledBy: stop) }
        }
        if let network {
            addTask { _ = await race({ await network.deliverChanges(to: reachable) }, cancelledBy: stop) }
        }
    }
}

public import ConnectionPolicy

/// Where a session learns the app's lifecycle state.
public protocol LifecycleSource: Sendable {
    /// The state now.
    var state: AppLifecycleState { get }

    /// Hands the state now, then every change, to `handler`, awaiting each, until the calling
    /// task is cancelled.
    func deliverChanges(to handler: @escaping @Sendable (AppLifecycleState) async -> Void) async
}

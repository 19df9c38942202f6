public import ConnectionPolicy

/// A lifecycle source that changes only when told: for custom lifecycles, SwiftUI's
/// `scenePhase`, and Linux (where it is the default and never changes by itself).
public final class ManualLifecycleSource: LifecycleSource {
    private let hub: ChangeHub<AppLifecycleState>

    /// A source that starts in `initialState` and changes only when you call `send(_:)`.
    public init(initialState: AppLifecycleState = .active) {
        hub = ChangeHub(initialState)
    }

    public var state: AppLifecycleState { hub.value }

    /// Sets the state and returns once every session listening has handled it.
    public func send(_ state: AppLifecycleState) async {
        await hub.send(state)
    }

    /// Sets the state without waiting (for callbacks that cannot await).
    public func post(_ state: AppLifecycleState) {
        hub.post(state)
    }

    /// The state now, then every change.
    public var stateStream: AsyncStream<AppLifecycleState> { hub.values() }

    public func deliverChanges(to handler: @escaping @Sendable (AppLifecycleState) async -> Void) async {
        await hub.deliver(to: handler)
    }
}

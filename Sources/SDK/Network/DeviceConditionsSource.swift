public import ConnectionPolicy

/// Where a session learns the device's conditions (`DeviceConditions`): the network path
/// (reachable, constrained, expensive, its interface), Low Power Mode and the thermal state.
/// `SystemConditionsSource` on Apple platforms; ``ManualConditionsSource`` elsewhere and in
/// tests; an app may write its own (a battery level rule, a user's "save data" switch).
public protocol DeviceConditionsSource: Sendable {
    /// The conditions now, as far as the source knows.
    var conditions: DeviceConditions { get }

    /// Hands the conditions now, then every change, to `handler`, awaiting each, until the
    /// calling task is cancelled.
    func deliverChanges(to handler: @escaping @Sendable (DeviceConditions) async -> Void) async
}

/// Device conditions that change only when told: for Linux, and for tests.
public final class ManualConditionsSource: DeviceConditionsSource {
    private let hub: ChangeHub<DeviceConditions>

    /// A source that starts with `conditions` and changes only when you call `send(_:)`.
    public init(_ conditions: DeviceConditions = .unconstrained) {
        hub = ChangeHub(conditions)
    }

    public var conditions: DeviceConditions { hub.value }

    /// Sets the conditions and returns once every session listening has handled them.
    public func send(_ conditions: DeviceConditions) async {
        await hub.send(conditions)
    }

    /// Changes the conditions as `change` says and returns once every session listening has
    /// handled them.
    public func update(_ change: (inout DeviceConditions) -> Void) async {
        var conditions = hub.value
        change(&conditions)
        await hub.send(conditions)
    }

    public func deliverChanges(to handler: @escaping @Sendable (DeviceConditions) async -> Void) async {
        await hub.deliver(to: handler)
    }
}

public import ConnectionPolicy
public import SDK

/// Drives a session's device conditions in a test: each call returns once the session has
/// handled the change, so the next line can assert on it.
///
/// ```swift
/// @Test func lowPowerStretchesTheHeartbeat() async throws {
///     let conditions = ConditionsDriver()
///     let session = Session(
///         settings: try .testing { $0.heartbeat(interval: .seconds(25), timeout: .seconds(10)) },
///         transport: TestServer().transport(), clock: TestClock(), conditions: conditions
///     )
///     try await withRunningSession(session) { status in
///         try await status.waitFor(.connected)
///         await conditions.lowPowerMode(true)
///         #expect(await session.liveness.heartbeat?.interval == .seconds(50))
///     }
/// }
/// ```
public final class ConditionsDriver: DeviceConditionsSource {
    private let source: ManualConditionsSource

    /// A driver that starts with `conditions`.
    public init(_ conditions: DeviceConditions = .unconstrained) {
        source = ManualConditionsSource(conditions)
    }

    public var conditions: DeviceConditions { source.conditions }

    /// Any conditions.
    public func send(_ conditions: DeviceConditions) async { await source.send(conditions) }
    /// Low Power Mode turned on or off.
    public func lowPowerMode(_ isEnabled: Bool) async { await source.update { $0.isLowPowerModeEnabled = isEnabled } }
    /// The device reached a thermal state.
    public func thermalState(_ state: ThermalState) async { await source.update { $0.thermalState = state } }
    /// A new path: reachable on `interface`, constrained (Low Data Mode) and expensive as given.
    public func path(_ interface: NetworkInterface, isConstrained: Bool = false, isExpensive: Bool = false) async {
        await source.update {
            $0.isNetworkReachable = true
            $0.interface = interface
            $0.isConstrained = isConstrained
            $0.isExpensive = isExpensive
        }
    }
    /// The network is gone (the path unsatisfied).
    public func unreachable() async {
        await source.update {
            $0.isNetworkReachable = false
            $0.interface = .unknown
        }
    }

    public func deliverChanges(to handler: @escaping @Sendable (DeviceConditions) async -> Void) async {
        await source.deliverChanges(to: handler)
    }
}

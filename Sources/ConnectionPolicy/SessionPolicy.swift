/// Decides whether the app should be connected now, and which timers to arm.
///
/// A policy is a value: each event goes in through a mutating method and the actions come out.
/// It does no I/O, reads no clock and starts no task, so it can be tested in microseconds and
/// replaced at run time. `AutoPolicy` and `ManualPolicy` are the built-in ones; an app may write
/// its own (``ConnectionTracker`` does the reconnect bookkeeping for it).
///
/// The session calls the methods from one place at a time and carries out the returned actions
/// in order. Events read as facts; none of them may be refused.
public protocol SessionPolicy: Sendable {
    /// The policy's name for logs and status (`"auto"`, `"manual"`).
    var name: String { get }

    /// The session starts, or this policy replaces another: decide from the facts.
    mutating func start(in context: PolicyContext) -> [PolicyAction]

    /// The app's lifecycle state changed.
    mutating func lifecycleChanged(to state: AppLifecycleState) -> [PolicyAction]

    /// The app called `connect()`.
    mutating func connectRequested() -> [PolicyAction]

    /// The app called `disconnect()`.
    mutating func disconnectRequested() -> [PolicyAction]

    /// The app called `ping()` (the session sends the ping itself).
    mutating func pingRequested() -> [PolicyAction]

    /// The connection the policy asked for is open (and authenticated).
    mutating func connectionOpened() -> [PolicyAction]

    /// The connection closed, or an attempt to open it failed, without the policy asking.
    mutating func connectionLost(_ loss: ConnectionLoss) -> [PolicyAction]

    /// A timer the policy armed fired. A stale fire (cancelled or re-armed since) must be ignored.
    mutating func timerFired(_ timer: PolicyTimer) -> [PolicyAction]

    /// The network became reachable or unreachable.
    mutating func networkReachabilityChanged(isReachable: Bool) -> [PolicyAction]

    /// The device's conditions changed (the path, Low Power Mode, the thermal state, and
    /// reachability, which ``networkReachabilityChanged(isReachable:)`` has already been told
    /// of). By default nothing happens.
    mutating func conditionsChanged(to conditions: DeviceConditions) -> [PolicyAction]

    /// How the session checks the connection is alive in `context`: `proposed` is what the
    /// settings and their power saving rules give. By default `proposed`, unchanged. Asked again
    /// whenever the lifecycle, the conditions or the policy change.
    func liveness(proposed: Liveness, in context: PolicyContext) -> Liveness
}

extension SessionPolicy {
    public mutating func conditionsChanged(to conditions: DeviceConditions) -> [PolicyAction] { [] }

    public func liveness(proposed: Liveness, in context: PolicyContext) -> Liveness { proposed }
}

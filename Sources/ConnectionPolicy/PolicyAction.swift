/// What a policy asks the session to do. The session carries out actions in the order given.
///
/// A policy commands two things, the connection and its own timers, and these four cases are
/// all there will be: a test's `switch` over them needs no `default`. A later release that
/// lets a policy decide something more does it as a new ``SessionPolicy`` requirement with a
/// default implementation (as ``SessionPolicy/liveness(proposed:in:)`` did), not a new case.
@frozen
public enum PolicyAction: Hashable, Sendable, CustomStringConvertible {
    /// Open a connection (the session never opens a second one while one is open or opening).
    case openConnection
    /// Make sure no connection is open or opening, and report the reason. When nothing is
    /// open the session only reports the reason.
    case closeConnection(DisconnectReason)
    /// Arm a timer to fire once after the duration; arming an id again replaces the earlier arming.
    case armTimer(PolicyTimer, after: Duration)
    /// Cancel a timer; its fire, should it race in, is stale and ignored.
    case cancelTimer(PolicyTimer)

    public var description: String {
        switch self {
        case .openConnection: "open connection"
        case .closeConnection(let reason): "close connection (\(reason))"
        case .armTimer(let timer, let delay): "arm \(timer) after \(delay)"
        case .cancelTimer(let timer): "cancel \(timer)"
        }
    }
}

package import ConnectionPolicy

/// A timer the controller's state machine arms: a policy's, or the connect timeout.
package enum ControlTimer: Hashable, Sendable, CustomStringConvertible {
    case policy(TimerID)
    case connectTimeout

    /// How diagnostics name it.
    package var sessionTimer: SessionTimer {
        switch self {
        case .policy(let id): .policy(id)
        case .connectTimeout: .connectTimeout
        }
    }

    package var description: String {
        switch self {
        case .policy(let id): id.name
        case .connectTimeout: "connect-timeout"
        }
    }
}

/// Why the state machine lets go of an attempt's connection.
package enum TeardownCause: Hashable, Sendable {
    /// The policy closed it (`PolicyAction.closeConnection(_:)`).
    case policyClosed(DisconnectReason)
    /// A new policy took over while it was opening: it decides afresh.
    case policyReplaced
    /// The app gave back a connection it opened without the policy (a background refresh).
    case returned
}

/// What ``ConnectionControl`` asks its performer to do, in order. Performers: the public
/// ``ConnectionController`` (against an app's own client) and ``Session`` (against a socket
/// speaking the server's protocol).
package enum ControlEffect: Hashable, Sendable {
    /// Start opening the connection of `attempt` — only once every earlier attempt's connection
    /// is closed (never two at once).
    case open(attempt: UInt64)
    /// Let go of `attempt`'s connection, opening or open: cancel the open, close what is open.
    case teardown(attempt: UInt64, cause: TeardownCause)
    /// Opening `attempt` took longer than the connect timeout: let go of it and report it lost
    /// (``ConnectionControl/lost(_:reason:disposition:uptime:)``) with `reason`.
    case connectTimedOut(attempt: UInt64, reason: DisconnectReason)
    /// The policy closed the connection (or, with nothing open, decided it stays closed): what
    /// waits on a connection fails with `reason`.
    case policyClosed(DisconnectReason)
    /// Arm `timer` to fire once after the delay (re-arming replaces the earlier arming; a fire
    /// is delivered only for the latest arming not cancelled since).
    case arm(ControlTimer, after: Duration)
    case cancel(ControlTimer)
    /// The status changed.
    case status(ConnectionStatus)
    /// How the connection's liveness is checked from now on: the heartbeat's interval and
    /// timeout, the probe on return.
    case liveness(Liveness)
    /// Check the open connection now (one ping, a short timeout) rather than trust it until the
    /// next heartbeat: the app returned to the foreground, or the path changed under it.
    case probe
    /// A line for the log.
    case log(LogLevel, String)
}

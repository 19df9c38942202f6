/// The facts about a connection that ended, or an attempt that failed, without the policy asking.
public struct ConnectionLoss: Hashable, Sendable, CustomStringConvertible {
    /// Why it ended.
    public var reason: DisconnectReason
    /// What the closing side said about trying again.
    public var disposition: RetryDisposition
    /// How long the connection had been open; `nil` when the attempt to open it failed.
    public var uptime: Duration?

    /// A loss for `reason`, with what the connection said about retrying (`disposition`) and how
    /// long it had been up (`uptime`; `nil` when it never opened).
    public init(reason: DisconnectReason, disposition: RetryDisposition = .retry, uptime: Duration? = nil) {
        self.reason = reason
        self.disposition = disposition
        self.uptime = uptime
    }

    /// An attempt to open a connection failed.
    public static func attemptFailed(_ reason: DisconnectReason = .networkLost, disposition: RetryDisposition = .retry) -> ConnectionLoss {
        ConnectionLoss(reason: reason, disposition: disposition, uptime: nil)
    }

    /// An open connection was lost after `uptime`.
    public static func lost(_ reason: DisconnectReason = .networkLost, disposition: RetryDisposition = .retry, after uptime: Duration) -> ConnectionLoss {
        ConnectionLoss(reason: reason, disposition: disposition, uptime: uptime)
    }

    public var description: String {
        if let uptime { "\(reason), \(disposition), up \(uptime)" } else { "\(reason), \(disposition), attempt failed" }
    }
}

/// Names a significant step the session replays after every reconnect: the connection, the
/// authentication, each subscription, and steps the app adds.
public struct RecoveryStepID: Hashable, Sendable, CustomStringConvertible, Comparable {
    /// The step's name.
    public let rawValue: String

    /// A step named `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The socket is open.
    public static let connected = RecoveryStepID(rawValue: "connected")
    /// The server accepted the credentials.
    public static let authenticated = RecoveryStepID(rawValue: "authenticated")
    /// The subscription to `channel` is active.
    public static func subscription(_ channel: String) -> RecoveryStepID { RecoveryStepID(rawValue: "subscribe:" + channel) }
    /// A step the app added with `addRecoveryStep`.
    public static func custom(_ name: String) -> RecoveryStepID { RecoveryStepID(rawValue: "custom:\(name)") }

    /// Indicates one of the two steps every connection performs before any other.
    public var isImplicit: Bool { self == .connected || self == .authenticated }

    public var description: String { rawValue }
    public static func < (lhs: RecoveryStepID, rhs: RecoveryStepID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// How a replay runs its steps.
///
/// An input you choose; a later release may add a mode, so a `switch` over it needs a `default`.
public enum ReplayMode: Hashable, Sendable {
    /// Every step whose prerequisites are done goes out at once (the default).
    case pipelined
    /// One step at a time, in journal order, each waiting for the one before (slower: one
    /// round trip per step; for comparison, and for a server that cannot take a pipeline).
    case sequential
}

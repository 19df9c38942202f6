/// Names a significant step the session replays after every reconnect: the connection, the
/// authentication, each subscription, and steps the app adds.
public struct RecoveryStepID: Hashable, Sendable, CustomStringConvertible, Comparable {
    /// The step's name.
    public let rawValue: String
    /// A subscription's channel as ``subscription(_:)`` was given it: a replay asks every step
    /// for its channel, and taking it out of `rawValue` each time cost a byte comparison and a
    /// new string. `nil` for any other step, and for one made from its raw value (whose channel
    /// is read from the name). Not part of the step's identity.
    let channel: String?

    /// A step named `rawValue`.
    public init(rawValue: String) {
        self.rawValue = rawValue
        self.channel = nil
    }

    private init(subscribing channel: String) {
        self.rawValue = "subscribe:" + channel
        self.channel = channel
    }

    /// The socket is open.
    public static let connected = RecoveryStepID(rawValue: "connected")
    /// The server accepted the credentials.
    public static let authenticated = RecoveryStepID(rawValue: "authenticated")
    /// The subscription to `channel` is active.
    public static func subscription(_ channel: String) -> RecoveryStepID { RecoveryStepID(subscribing: channel) }
    /// A step the app added with `addRecoveryStep`.
    public static func custom(_ name: String) -> RecoveryStepID { RecoveryStepID(rawValue: "custom:\(name)") }

    /// The channel of a subscription's step, however it was made (``subscription(_:)``, or a
    /// raw value that names one); nil for any other step.
    var subscribedChannel: String? {
        // Kept by `.subscription(_:)`, or else read from the name (compared as bytes:
        // `hasPrefix` compares characters).
        if let channel { return channel }
        let prefix = "subscribe:".utf8
        guard rawValue.utf8.starts(with: prefix) else { return nil }
        return String(Substring(rawValue.utf8.dropFirst(prefix.count)))
    }

    /// Indicates one of the two steps every connection performs before any other.
    public var isImplicit: Bool { self == .connected || self == .authenticated }

    public var description: String { rawValue }
    public static func < (lhs: RecoveryStepID, rhs: RecoveryStepID) -> Bool { lhs.rawValue < rhs.rawValue }
    public static func == (lhs: RecoveryStepID, rhs: RecoveryStepID) -> Bool { lhs.rawValue == rhs.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
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

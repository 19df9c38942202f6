public import ConnectionPolicy

/// A timer a ``Session`` or ``ConnectionController`` has armed, for diagnostics and tests
/// (``Session/armedTimers``): `#expect(session.armedTimers == [.watchdog])`.
public struct SessionTimer: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// What the timer is for.
    ///
    /// A struct, not an enum: a later release can add a kind of timer without breaking an
    /// app's `switch` (give it a `default`).
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The kind's name (`"heartbeat"`, `"policy"`).
        public let rawValue: String

        /// A kind with this name; Tether arms only the kinds below.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The policy's (`TimerID`: watchdog, reconnect, background grace, a custom policy's).
        public static let policy = Kind(rawValue: "policy")
        /// The deadline for an attempt to open and authenticate.
        public static let connectTimeout = Kind(rawValue: "connectTimeout")
        /// A request waiting for its reply.
        public static let request = Kind(rawValue: "request")
        /// An app-defined recovery step's timeout.
        public static let recoveryStep = Kind(rawValue: "recoveryStep")
        /// The oldest publish waiting in the outbox.
        public static let outboxDeadline = Kind(rawValue: "outboxDeadline")
        /// A background refresh's deadline.
        public static let refreshDeadline = Kind(rawValue: "refreshDeadline")
        /// The check for subscribers held back at their bound that stopped reading.
        public static let subscriberStall = Kind(rawValue: "subscriberStall")
        /// The session's heartbeat (`Liveness`).
        public static let heartbeat = Kind(rawValue: "heartbeat")
        /// The server protocol's own (`socket.io-heartbeat`, `mqtt-keepalive`).
        public static let protocolTimer = Kind(rawValue: "protocolTimer")

        public var description: String { rawValue }
    }

    /// What the timer is for.
    public let kind: Kind
    /// Its name, as logs show it.
    public let name: String

    /// A timer of `kind`, named `name`.
    public init(_ kind: Kind, name: String) {
        self.kind = kind
        self.name = name
    }

    /// A policy's timer.
    public static func policy(_ id: TimerID) -> SessionTimer { SessionTimer(.policy, name: id.name) }
    /// A protocol's own timer, by name.
    public static func protocolTimer(_ name: String) -> SessionTimer { SessionTimer(.protocolTimer, name: name) }

    /// Manual mode's background watchdog.
    public static let watchdog = policy(.watchdog)
    /// The wait before the next reconnect attempt.
    public static let reconnect = policy(.reconnect)
    /// Auto mode's grace after the app leaves the foreground.
    public static let backgroundGrace = policy(.backgroundGrace)
    /// The deadline for an attempt to open and authenticate.
    public static let connectTimeout = SessionTimer(.connectTimeout, name: "connect-timeout")
    /// A request waiting for its reply.
    public static let request = SessionTimer(.request, name: "request")
    /// An app-defined recovery step's timeout.
    public static let recoveryStep = SessionTimer(.recoveryStep, name: "recovery-step")
    /// The oldest publish waiting in the outbox.
    public static let outbox = SessionTimer(.outboxDeadline, name: "outbox")
    /// A background refresh's deadline.
    public static let refresh = SessionTimer(.refreshDeadline, name: "refresh")
    /// The session's heartbeat.
    public static let heartbeat = SessionTimer(.heartbeat, name: "heartbeat")
    /// The check for subscribers that stopped reading.
    public static let subscriberStall = SessionTimer(.subscriberStall, name: "subscriber-stall")

    public static func < (lhs: SessionTimer, rhs: SessionTimer) -> Bool { lhs.name < rhs.name }

    public var description: String { name }
}

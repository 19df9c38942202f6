/// Why the session is not connected. New reasons may be added without breaking apps, so a
/// `switch` over `code` needs a `default`.
///
/// A reason never carries a credential: `detail` holds only what a server or the transport said
/// about the failure, and the session strips anything it was given as a secret.
public struct DisconnectReason: Hashable, Sendable, CustomStringConvertible {
    /// The kind of reason.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Wrapped: String, Hashable, Sendable {
            case notStarted
            case serverUntrusted
            case appRequested
            case appBackgrounded
            case watchdogExpired
            case backgroundTimeExpired
            case networkLost
            case networkUnreachable
            case serverClosed
            case credentialsRejected
            case retriesExhausted
            case policyReplaced
            case sessionEnded
            case error
        }

        let wrapped: Wrapped

        /// Indicates that nothing has connected yet.
        public static let notStarted = Code(wrapped: .notStarted)
        /// The app's evaluation of the server's trust (its pinning) refused the server: nothing
        /// is retried until the app calls `connect()`.
        public static let serverUntrusted = Code(wrapped: .serverUntrusted)
        /// Indicates that the app called `disconnect()`.
        public static let appRequested = Code(wrapped: .appRequested)
        /// Indicates that the app went to the background (Auto mode).
        public static let appBackgrounded = Code(wrapped: .appBackgrounded)
        /// Indicates that no `ping()` came within the background window (Manual mode).
        public static let watchdogExpired = Code(wrapped: .watchdogExpired)
        /// Indicates that the OS took back the app's background execution time before the policy
        /// was done with the connection (iOS suspends the app then): closed in order instead of
        /// frozen open.
        public static let backgroundTimeExpired = Code(wrapped: .backgroundTimeExpired)
        /// Indicates that the connection was lost or could not be opened.
        public static let networkLost = Code(wrapped: .networkLost)
        /// Indicates that the network is unreachable: the connection is down and the session
        /// waits for the network to come back before it tries again (status `reconnecting`);
        /// `detail` names what ended the connection.
        public static let networkUnreachable = Code(wrapped: .networkUnreachable)
        /// Indicates that the server closed the connection.
        public static let serverClosed = Code(wrapped: .serverClosed)
        /// Indicates that the server rejected the credentials: no retry until new ones or `connect()`.
        public static let credentialsRejected = Code(wrapped: .credentialsRejected)
        /// Indicates that the reconnect attempt limit was reached.
        public static let retriesExhausted = Code(wrapped: .retriesExhausted)
        /// Indicates that the app replaced the connection policy.
        public static let policyReplaced = Code(wrapped: .policyReplaced)
        /// Indicates that the session was shut down.
        public static let sessionEnded = Code(wrapped: .sessionEnded)
        /// Indicates an error in the session or the transport; `detail` says which.
        public static let error = Code(wrapped: .error)

        public var description: String { wrapped.rawValue }
    }

    /// The kind of reason.
    public let code: Code
    /// What the server or transport said, if anything (never a secret).
    public let detail: String?

    /// A reason with its code and an optional detail (a server's close reason, an error's message).
    public init(_ code: Code, detail: String? = nil) {
        self.code = code
        self.detail = detail
    }

    /// Nothing has connected yet.
    public static let notStarted = DisconnectReason(.notStarted)
    /// The app asked for it (`disconnect()`).
    public static let appRequested = DisconnectReason(.appRequested)
    /// The app went to the background (Auto mode).
    public static let appBackgrounded = DisconnectReason(.appBackgrounded)
    /// Manual mode's background watchdog expired: the app did not `ping()` in time.
    public static let watchdogExpired = DisconnectReason(.watchdogExpired)
    /// iOS took back the background time the connection was running on.
    public static let backgroundTimeExpired = DisconnectReason(.backgroundTimeExpired)
    /// The connection was lost (a reset, a timeout, a failed heartbeat) or could not be opened.
    public static let networkLost = DisconnectReason(.networkLost)
    /// The network is unreachable: the session waits for it before trying again.
    public static let networkUnreachable = DisconnectReason(.networkUnreachable)
    /// The server refused the credentials: nothing is retried until they change.
    public static let credentialsRejected = DisconnectReason(.credentialsRejected)
    /// The backoff's attempts ran out (`Backoff.maxAttempts`).
    public static let retriesExhausted = DisconnectReason(.retriesExhausted)
    /// The app replaced the policy; the new one decides what comes next.
    public static let policyReplaced = DisconnectReason(.policyReplaced)
    /// The session was shut down.
    public static let sessionEnded = DisconnectReason(.sessionEnded)

    /// The server closed the connection, with what it said.
    public static func serverClosed(_ detail: String? = nil) -> DisconnectReason {
        DisconnectReason(.serverClosed, detail: detail)
    }

    /// An error ended the connection, with what it was.
    public static func error(_ detail: String) -> DisconnectReason {
        DisconnectReason(.error, detail: detail)
    }

    public var description: String {
        if let detail { "\(code) (\(detail))" } else { code.description }
    }
}

public import ConnectionPolicy

/// Why a session call did not succeed. No error message ever contains a credential.
public struct SessionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure. New codes may be added; `switch` with a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Wrapped: String, Hashable, Sendable {
            case notConnected, invalidArgument, outboxFull, disconnected, connectionLost, timedOut, rejected, sessionEnded, notWanted, encodingFailed, subscriberTooSlow,
                subscriberFellBehind, deferred
        }

        let wrapped: Wrapped

        /// The call needs a connection and there is none.
        public static let notConnected = Code(wrapped: .notConnected)
        /// The outbox is full: too many publishes wait for a connection.
        public static let outboxFull = Code(wrapped: .outboxFull)
        /// An argument is out of range (for instance an empty channel name).
        public static let invalidArgument = Code(wrapped: .invalidArgument)
        /// The session disconnected (for ``SessionError/reason``) before the call completed.
        public static let disconnected = Code(wrapped: .disconnected)
        /// The connection was lost before the reply came; the request may or may not have reached the server.
        public static let connectionLost = Code(wrapped: .connectionLost)
        /// No reply came within the request timeout.
        public static let timedOut = Code(wrapped: .timedOut)
        /// The server answered with an error (``SessionError/serverError``).
        public static let rejected = Code(wrapped: .rejected)
        /// The session was shut down (``Session/shutdown()``, or the task running
        /// ``Session/run()`` was cancelled): every call made after that throws it at once, and
        /// every stream it handed out ends with it.
        public static let sessionEnded = Code(wrapped: .sessionEnded)
        /// The policy does not connect now (for instance Auto mode in the background).
        public static let notWanted = Code(wrapped: .notWanted)
        /// The message could not be encoded (for instance it is larger than the frame limit).
        public static let encodingFailed = Code(wrapped: .encodingFailed)

        /// A subscriber stopped reading: held back at its bound
        /// (``AppSettings/subscriberBufferLimit``, ``AppSettings/subscriberBufferBytes``), it read
        /// nothing for ``AppSettings/subscriberStallTimeout``. Its ``Subscription`` ends with this
        /// after the messages it held (the message names the last one it got). Subscribe again,
        /// and fetch what came meanwhile.
        public static let subscriberTooSlow = Code(wrapped: .subscriberTooSlow)
        /// A subscriber that reads, slower than its channel's stream, missed messages the session
        /// cannot get back for it: the server's protocol cannot ask for a channel's messages
        /// again (all but Tether's), or the catch-up went past what the server still holds. Its
        /// ``Subscription`` ends with this after the messages it held (the message names the last
        /// one it got). Subscribe again, and fetch what came meanwhile.
        public static let subscriberFellBehind = Code(wrapped: .subscriberFellBehind)
        /// Discretionary work the device asked to save on was not done now: a background
        /// refresh on a constrained path (Low Data Mode). Try again later, or ask for it now
        /// (``Session/refresh(within:discretionary:)`` with `discretionary: false`).
        public static let deferred = Code(wrapped: .deferred)

        public var description: String { wrapped.rawValue }
    }

    /// What kind of failure: `switch` over it with a `default`.
    public let code: Code
    /// What happened, in words for a log (credentials are redacted).
    public let message: String
    /// The disconnect reason, for ``Code/disconnected``.
    public let reason: DisconnectReason?
    /// The server's error reply, for ``Code/rejected``.
    public let serverError: ServerError?

    /// An error with its code and message, and the disconnect or server error behind it.
    public init(_ code: Code, _ message: String, reason: DisconnectReason? = nil, serverError: ServerError? = nil) {
        self.code = code
        self.message = message
        self.reason = reason
        self.serverError = serverError
    }

    public var description: String { "\(code): \(message)" }
}

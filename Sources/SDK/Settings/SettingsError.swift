/// A setting `AppSettings.Builder.build()` would not accept.
public struct SettingsError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of problem. New codes may be added; `switch` with a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Wrapped: String, Hashable, Sendable {
            case missingURL, invalidURL, insecureTransport, invalidDuration, invalidBackoff, invalidLimit, invalidProtocol
        }

        let wrapped: Wrapped

        /// No server URL was given.
        public static let missingURL = Code(wrapped: .missingURL)
        /// The URL is not a `ws://` or `wss://` URL with a host.
        public static let invalidURL = Code(wrapped: .invalidURL)
        /// A `ws://` URL to a host that is not loopback, without `allowInsecureTransport(true)`.
        public static let insecureTransport = Code(wrapped: .insecureTransport)
        /// A duration is out of range.
        public static let invalidDuration = Code(wrapped: .invalidDuration)
        /// The backoff's values do not fit together.
        public static let invalidBackoff = Code(wrapped: .invalidBackoff)
        /// A size or count is out of range.
        public static let invalidLimit = Code(wrapped: .invalidLimit)
        /// The server protocol's own options do not work (an empty or reserved Socket.IO event
        /// name, an empty query item name).
        public static let invalidProtocol = Code(wrapped: .invalidProtocol)

        public var description: String { wrapped.rawValue }
    }

    /// Which setting was invalid.
    public let code: Code
    /// What was wrong with it, in words.
    public let message: String

    /// An error with its code and message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "invalid settings (\(code)): \(message)" }
}

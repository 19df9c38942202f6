public import SDK

/// What an app sent a ``TestServer``, one request at a time, in no protocol's terms: the
/// credentials it presented, what it subscribed to and from where, what it published, that it
/// pinged. ``TestServer/requests`` has them in the order the server read them.
///
/// ```swift
/// let server = TestServer(), clock = TestClock()
/// let session = Session(settings: try .testing(), transport: server.transport(), clock: clock)
/// try await withRunningSession(session) { _ in
///     _ = try await session.publish("hello", to: "room")
///     await clock.settle()
///     #expect(server.requests.filter(\.isPublish).count == 1)   // sent exactly once
/// }
/// ```
///
/// A later release may add a kind of request: a `switch` over it needs a `default`.
public enum ReceivedRequest: Hashable, Sendable, CustomStringConvertible {
    /// The credentials the app presented: in the upgrade request (`Authorization`), or in its
    /// first message to a server that reads them there; `nil` when it presented none. A
    /// `Secret` never shows its value in a description; compare it with `Secret("token")`.
    case credentials(Secret?)
    /// A subscribe to `channel`, asking for what came after `position` (`nil`: from now on).
    /// The subscriptions an upgrade request carried count too, in the order it named them.
    case subscribe(channel: String, from: StreamPosition?)
    /// An unsubscribe from `channel`.
    case unsubscribe(channel: String)
    /// A publish of `data` to `channel`, with its idempotency key: the session gives each
    /// publish one and sends it again with the same key, so two entries with one key are one
    /// publish sent twice.
    case publish(channel: String, data: JSONValue, key: String?)
    /// A ping: the app's `ping()`, a heartbeat, or the probe when it came back.
    case ping
    /// A frame the server could not read, and why (it answered as the protocol says: an
    /// error, or closing the connection).
    case undecodable(reason: String)

    /// Indicates a publish.
    public var isPublish: Bool { if case .publish = self { true } else { false } }

    /// Indicates a subscribe.
    public var isSubscribe: Bool { if case .subscribe = self { true } else { false } }

    /// Indicates a ping.
    public var isPing: Bool { self == .ping }

    /// The channel a subscribe, unsubscribe or publish names.
    public var channel: String? {
        switch self {
        case .subscribe(let channel, _), .unsubscribe(let channel), .publish(let channel, _, _): channel
        case .credentials, .ping, .undecodable: nil
        }
    }

    public var description: String {
        switch self {
        case .credentials(let token): "credentials \(token == nil ? "none" : "<redacted>")"
        case .subscribe(let channel, let position): "subscribe \(channel)" + (position.map { " from \($0)" } ?? "")
        case .unsubscribe(let channel): "unsubscribe \(channel)"
        case .publish(let channel, _, let key): "publish \(channel)" + (key.map { " key \($0)" } ?? "")
        case .ping: "ping"
        case .undecodable(let reason): "undecodable (\(reason))"
        }
    }

    /// What a message of the reference protocol asks, as a request.
    init(_ message: ClientMessage) {
        switch message {
        case .authenticate(_, let token): self = .credentials(token)
        case .subscribe(_, let channel, let since): self = .subscribe(channel: channel, from: since.map(StreamPosition.sequence))
        case .unsubscribe(_, let channel): self = .unsubscribe(channel: channel)
        case .publish(_, let channel, let data, let key): self = .publish(channel: channel, data: data, key: key)
        case .ping: self = .ping
        }
    }
}

/// The protocol the server speaks, chosen once in ``AppSettings/Builder/serverProtocol(_:)``.
/// Whatever it is, the session keeps the same promises — one socket, the policy's lifecycle,
/// resubscribe and replay after a reconnect, the bounded outbox — and says plainly where a
/// protocol can do less (`docs/PROTOCOLS.md`): a publish it cannot confirm ends
/// ``PublishReceipt/Confirmation/sentUnconfirmed``, a subscription it cannot resume is named in
/// ``RecoveryReport/refetch``, and messages it does not number arrive with `sequence` `nil`.
public struct ServerProtocol: Sendable, CustomStringConvertible {
    enum Kind: Sendable {
        case tether
        case adapter(any WireProtocolDescription)
    }

    let kind: Kind
    /// A short name for logs and descriptions (`tether`, `graphql-transport-ws`, `socket.io`).
    public let name: String

    /// Tether's own protocol (`docs/PROTOCOL.md`), through the settings' codec: sequence
    /// numbers, resume, exactly-once publishes. The default.
    public static let tether = ServerProtocol(kind: .tether, name: "tether")

    /// graphql-transport-ws (Apollo Server, Hasura, GraphQL Yoga, Strawberry, graphql-ws): a
    /// subscription is a GraphQL subscription operation (``Topic/graphQL(_:query:variables:)``),
    /// a publish is a mutation whose result is its acknowledgement.
    ///
    /// - Parameter initPayload: the `connection_init` payload for the token (default
    ///   `{"token": …}`, none without a token).
    public static func graphQLTransportWS(
        initPayload: @escaping @Sendable (Secret?) -> JSONValue? = ServerProtocol.tokenPayload
    ) -> ServerProtocol {
        ServerProtocol(kind: .adapter(GraphQLTransportWS(initPayload: initPayload)), name: GraphQLTransportWS.subprotocol)
    }

    /// Socket.IO v4 (Engine.IO v4, WebSocket transport, default namespace). The server URL is the
    /// server's root (`wss://host/`): the session adds Engine.IO's path (`/socket.io/` unless
    /// the URL names another) and query. Subscribing is the app's join/leave events with an ack;
    /// messages arrive as the message event naming their room.
    ///
    /// - Parameters:
    ///   - events: the app's event names.
    ///   - acknowledgesPublishes: whether the server's publish handler answers with an ack
    ///     (without one a publish ends `sentUnconfirmed`).
    ///   - auth: the namespace connect's auth payload for the token (default `{"token": …}`).
    ///   - credentialsInQuery: the name of a query item to carry the token in the URL instead,
    ///     for servers that read it there. Opt-in: the item is redacted from every log line,
    ///     description and error, but a URL can still reach proxies' logs.
    public static func socketIO(
        events: SocketIOEvents = SocketIOEvents(),
        acknowledgesPublishes: Bool = true,
        auth: @escaping @Sendable (Secret?) -> JSONValue? = ServerProtocol.tokenPayload,
        credentialsInQuery: String? = nil
    ) -> ServerProtocol {
        let adapter = SocketIO(events: events, acknowledgesPublishes: acknowledgesPublishes, authPayload: auth, credentialsQueryItem: credentialsInQuery)
        return ServerProtocol(kind: .adapter(adapter), name: "socket.io")
    }

    /// A protocol written in this package (an adapter not offered above).
    package static func adapter(_ adapter: any WireProtocolDescription, name: String) -> ServerProtocol {
        ServerProtocol(kind: .adapter(adapter), name: name)
    }

    /// The default credentials payload: `{"token": …}`, or none without a token.
    @Sendable public static func tokenPayload(_ token: Secret?) -> JSONValue? {
        token.map { ["token": .string($0.revealedValue)] }
    }

    public var description: String { name }
}

/// The events a Socket.IO server's app defines for Tether's operations.
public struct SocketIOEvents: Hashable, Sendable {
    /// Joins a room: `emit(join, room)`, answered with an ack (`{"ok": false, "error"}` refuses).
    public var join: String
    /// Leaves a room: `emit(leave, room)`.
    public var leave: String
    /// Publishes: `emit(publish, {channelKey: room, …data})`, with an ack when the server sends one.
    public var publish: String
    /// The event the server pushes messages with: `emit(message, {channelKey: room, …})`.
    public var message: String
    /// The member of a message's payload that names its room.
    public var channelKey: String

    public init(join: String = "join", leave: String = "leave", publish: String = "publish", message: String = "message", channelKey: String = "room") {
        self.join = join
        self.leave = leave
        self.publish = publish
        self.message = message
        self.channelKey = channelKey
    }
}

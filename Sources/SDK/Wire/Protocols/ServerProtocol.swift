/// The protocol the server speaks, chosen once in ``AppSettings/Builder/serverProtocol(_:)``.
/// Whatever it is, the session keeps the same promises — one socket, the policy's lifecycle,
/// resubscribe and replay after a reconnect, the bounded outbox — and says plainly where a
/// protocol can do less (<doc:BackendProtocols>): a publish it cannot confirm ends
/// ``PublishReceipt/Confirmation/sentUnconfirmed``, a subscription it cannot resume is named in
/// ``RecoveryReport/refetch``, and messages it does not number arrive with `sequence` `nil`.
public struct ServerProtocol: Sendable, CustomStringConvertible {
    enum Kind: Sendable {
        case tether(TetherHandshake)
        case adapter(any WireProtocolDescription)
    }

    let kind: Kind
    /// A short name for logs and descriptions (`tether`, `graphql-transport-ws`, `socket.io`).
    public let name: String

    /// Tether's own protocol (`docs/PROTOCOL.md`), through the settings' codec: sequence
    /// numbers, resume, exactly-once publishes; resume in the upgrade request, falling back to
    /// version 1 pipelined (``TetherHandshake/resumeInUpgrade``). The default.
    public static let tether = ServerProtocol(kind: .tether(.resumeInUpgrade), name: "tether")

    /// Tether's own protocol with the handshake `handshake`.
    public static func tether(handshake: TetherHandshake) -> ServerProtocol {
        ServerProtocol(kind: .tether(handshake), name: "tether")
    }

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

    /// MQTT 3.1.1 or 5 over WebSocket (mosquitto, EMQX, HiveMQ, AWS IoT; subprotocol `mqtt`).
    /// A channel is a topic filter (`sensors/+/temperature`, `chat/#`): every message whose topic
    /// it matches arrives on it as `{"topic", "payload"}` (``Topic/mqtt(_:qos:)`` picks a QoS per
    /// subscription). A publish's channel is its topic and its data the payload, as JSON text.
    /// The session's token is the password. With a persistent session the broker keeps the
    /// subscriptions and queues QoS 1 messages while the app is away: a reconnect resumes it
    /// (no resubscribe; what it queued is delivered and reported as caught up), and QoS 1
    /// publishes whose PUBACK was lost are re-sent with DUP set. See <doc:BackendProtocols>.
    ///
    /// - Parameters:
    ///   - clientID: the broker's key to the session. `nil`: each ``Session`` makes one
    ///     (`tether-` and 16 hex digits) and keeps it across its reconnects; give a stable one
    ///     (per install) for a relaunched app to find its session again.
    ///   - username: the CONNECT username (the token, if any, is the password).
    ///   - version: ``MQTTVersion/v3_1_1`` (default) or ``MQTTVersion/v5`` (a broker that does
    ///     not speak it ends the session with an error naming the version, never a retry loop).
    ///   - qos: subscriptions' and publishes' QoS (default at least once: QoS 1).
    ///   - persistentSession: clean session off (MQTT 5: a session expiry), so the broker keeps
    ///     the session between connections (default true).
    ///   - sessionExpiry: MQTT 5: how long the broker keeps a persistent session after the
    ///     connection ends (default 1 hour; a 3.1.1 broker keeps it by its own configuration).
    ///   - keepAlive: the CONNECT keep-alive, whole seconds (default 60 s; 0 turns it off); a
    ///     PINGREQ goes out every three quarters of it and one unanswered for half of it ends the
    ///     connection.
    ///   - maximumPacketSize: the largest packet accepted from the broker (default 1 MiB); a
    ///     larger one ends the connection as a protocol error (MQTT 5 tells the broker).
    public static func mqtt(
        clientID: String? = nil, username: String? = nil, version: MQTTVersion = .v3_1_1, qos: MQTTQoS = .atLeastOnce,
        persistentSession: Bool = true, sessionExpiry: Duration = .seconds(3600), keepAlive: Duration = .seconds(60),
        maximumPacketSize: Int = 1 << 20
    ) -> ServerProtocol {
        let adapter = MQTT(
            version: version, clientID: clientID, username: username, qos: qos, persistentSession: persistentSession,
            sessionExpiry: sessionExpiry, keepAlive: keepAlive, maximumPacketSize: maximumPacketSize
        )
        return ServerProtocol(kind: .adapter(adapter), name: MQTT.subprotocol)
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

    /// The event names your server uses: each has Socket.IO's conventional default.
    public init(join: String = "join", leave: String = "leave", publish: String = "publish", message: String = "message", channelKey: String = "room") {
        self.join = join
        self.leave = leave
        self.publish = publish
        self.message = message
        self.channelKey = channelKey
    }
}

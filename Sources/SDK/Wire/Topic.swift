/// What the app subscribes to: a channel by name, with what the server's protocol needs to
/// know about it. The session keys subscriptions by ``name`` (the name in every
/// ``ChannelMessage``, ``RecoveryReport`` and log line); the protocol reads ``options``:
///
/// - Tether and Socket.IO: none — the name is the channel (the room).
/// - graphql-transport-ws: the subscription operation, `{"query", "variables"?,
///   "operationName"?}` (or just the query as a string); see ``graphQL(_:query:variables:)``.
/// - MQTT: the name is the topic filter; `{"qos": 0 or 1}` overrides the protocol's QoS; see
///   ``mqtt(_:qos:)``.
public struct Topic: Hashable, Sendable, CustomStringConvertible {
    /// The channel's name, 1 to 256 bytes.
    public var name: String
    /// What the protocol needs beyond the name.
    public var options: JSONValue?

    /// A topic named `name`, with what its protocol sends when subscribing (`options`).
    public init(_ name: String, options: JSONValue? = nil) {
        self.name = name
        self.options = options
    }

    /// A GraphQL subscription operation, named `name` in the session.
    public static func graphQL(_ name: String, query: String, variables: [String: JSONValue] = [:]) -> Topic {
        var operation: [String: JSONValue] = ["query": .string(query)]
        if !variables.isEmpty { operation["variables"] = .object(variables) }
        return Topic(name, options: .object(operation))
    }

    /// An MQTT topic filter (wildcards allowed) at `qos`, named by the filter in the session.
    public static func mqtt(_ filter: String, qos: MQTTQoS) -> Topic {
        Topic(filter, options: ["qos": JSONValue(Int(qos.rawValue))])
    }

    public var description: String { name }
}

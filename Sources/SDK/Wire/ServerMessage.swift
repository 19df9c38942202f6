/// What the server sends to a client (see `docs/PROTOCOL.md`).
public enum ServerMessage: Hashable, Sendable, CustomStringConvertible {
    /// A request succeeded.
    case ack(Ack)
    /// A message on a channel the client subscribed to.
    case message(ChannelMessage)
    /// A request failed; `id` is `nil` when the error answers no particular request.
    case error(ServerError)
    /// The answer to a ping.
    case pong(id: RequestID)

    public var description: String {
        switch self {
        case .ack(let ack): "ack #\(ack.id)"
        case .message(let message): "message \(message.channel)#\(message.sequence.map(String.init) ?? "-")"
        case .error(let error): "error \(error)"
        case .pong(let id): "pong #\(id)"
        }
    }
}

/// A successful reply.
public struct Ack: Hashable, Sendable {
    /// The request it answers.
    public var id: RequestID
    /// For `publish`: the message's sequence number. For `subscribe`: the channel's latest
    /// sequence number when the subscription began.
    public var sequence: UInt64?
    /// For `subscribe` with `since`: the server no longer had every message after `since`.
    public var gap: Bool

    public init(id: RequestID, sequence: UInt64? = nil, gap: Bool = false) {
        self.id = id
        self.sequence = sequence
        self.gap = gap
    }
}

/// A message on a channel. On Tether's protocol the server numbers them: sequence numbers per
/// channel start at 1 and increase by one, so the session delivers each exactly once and in
/// order, and a resubscribe catches up from the last one. Protocols that do not number messages
/// (graphql-transport-ws, Socket.IO) deliver them with `sequence` `nil`, as the server sent them.
/// On MQTT the broker numbers nothing either, but its persistent session resumes: the session
/// numbers each subscription's deliveries itself (1, 2, …, continuing across reconnects), so a
/// resume's catch-up is counted — numbers local to this session, not the broker's.
public struct ChannelMessage: Hashable, Sendable {
    public var channel: String
    /// Where the message stands in its channel's stream, in the protocol's own terms.
    package var position: StreamPosition?
    /// The server's sequence number, where the protocol numbers messages (MQTT: the session's
    /// count of the subscription's deliveries).
    public var sequence: UInt64? {
        get { position?.sequence }
        set { position = newValue.map(StreamPosition.sequence) }
    }
    /// What was sent: Tether's `data`; on graphql-transport-ws the `next` message's whole
    /// `payload` (`{"data": …}`, with `errors` where the server sent some); on Socket.IO the
    /// message event's argument; on MQTT `{"topic", "payload"}`.
    public var data: JSONValue

    public init(channel: String, sequence: UInt64?, data: JSONValue) {
        self.init(channel: channel, position: sequence.map(StreamPosition.sequence), data: data)
    }

    package init(channel: String, position: StreamPosition?, data: JSONValue) {
        self.channel = channel
        self.position = position
        self.data = data
    }
}

/// An error reply from the server.
public struct ServerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The request it answers, if any.
    public var id: RequestID?
    /// A machine-readable code (`unauthorized`, `bad_request`, `unknown_channel`, …).
    public var code: String
    /// What went wrong, for people.
    public var message: String

    public init(id: RequestID?, code: String, message: String) {
        self.id = id
        self.code = code
        self.message = message
    }

    /// The code the server uses for rejected credentials.
    public static let unauthorizedCode = "unauthorized"

    public var description: String { "\(code): \(message)" + (id.map { " (request #\($0))" } ?? "") }
}

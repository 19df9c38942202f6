/// One Phoenix Channels message in the V2 serializer (`vsn=2.0.0`): as text, the JSON array
/// `[join_ref, ref, topic, event, payload]`; as binary, a push (kind 0, client to server), a
/// reply (kind 1) or a broadcast (kind 2), each with one-byte lengths and the payload's raw bytes
/// (`../shared/research/phoenix-transcripts.md`, §3 and §6). Pure: no socket, no clock.
package struct PhoenixMessage: Hashable, Sendable {
    /// What the message carries.
    package enum Payload: Hashable, Sendable {
        /// A JSON payload (a text frame's fifth element).
        case json(JSONValue)
        /// A binary push's or broadcast's bytes.
        case binary([UInt8])
        /// A binary reply: its status (`ok`, `error`) and the response's bytes.
        case binaryReply(status: String, response: [UInt8])
    }

    /// The join this message belongs to (`nil` for broadcasts and for the socket's own topic).
    package var joinRef: String?
    /// The request this message is, or answers (`nil` for broadcasts and channel pushes).
    package var ref: String?
    package var topic: String
    package var event: String
    package var payload: Payload

    package init(joinRef: String?, ref: String?, topic: String, event: String, payload: Payload) {
        self.joinRef = joinRef
        self.ref = ref
        self.topic = topic
        self.event = event
        self.payload = payload
    }

    /// The events Phoenix itself defines.
    package enum Event {
        package static let join = "phx_join"
        package static let leave = "phx_leave"
        package static let reply = "phx_reply"
        package static let error = "phx_error"
        package static let close = "phx_close"
        package static let heartbeat = "heartbeat"
        /// The socket's own topic (heartbeats).
        package static let socketTopic = "phoenix"
    }
}

/// Why a frame is not a Phoenix V2 message.
package struct PhoenixFrameError: Error, Hashable, Sendable, CustomStringConvertible {
    package let message: String

    package init(_ message: String) {
        self.message = message
    }

    package var description: String { "phoenix: \(message)" }
}

/// Identifies a request, so its reply can be matched to it.
public typealias RequestID = UInt64

/// What a client sends to the server (see `docs/PROTOCOL.md`).
package enum ClientMessage: Hashable, Sendable, CustomStringConvertible {
    /// The first message on every connection: the credentials.
    case authenticate(id: RequestID, token: Secret?)
    /// Join a channel; with `since`, also deliver every retained message after that sequence number.
    case subscribe(id: RequestID, channel: String, since: UInt64?)
    /// Leave a channel.
    case unsubscribe(id: RequestID, channel: String)
    /// Publish to a channel; the server acknowledges with the message's sequence number. With a
    /// `key` (1 to 64 bytes, chosen by the client, unique per publish), the server applies the
    /// publish at most once within its deduplication window: a re-sent publish with the same key
    /// is acknowledged with the first one's sequence number and not delivered again.
    case publish(id: RequestID, channel: String, data: JSONValue, key: String? = nil)
    /// Ask the server to answer with a pong.
    case ping(id: RequestID)

    /// The request's id.
    package var id: RequestID {
        switch self {
        case .authenticate(let id, _), .subscribe(let id, _, _), .unsubscribe(let id, _), .publish(let id, _, _, _), .ping(let id): id
        }
    }

    package var description: String {
        switch self {
        case .authenticate(let id, let token): "authenticate #\(id) token=\(token == nil ? "none" : "<redacted>")"
        case .subscribe(let id, let channel, let since): "subscribe #\(id) \(channel)" + (since.map { " since \($0)" } ?? "")
        case .unsubscribe(let id, let channel): "unsubscribe #\(id) \(channel)"
        case .publish(let id, let channel, _, let key): "publish #\(id) \(channel)" + (key.map { " key \($0)" } ?? "")
        case .ping(let id): "ping #\(id)"
        }
    }
}

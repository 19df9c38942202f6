/// What the server sends to a client (see `docs/PROTOCOL.md`).
package enum ServerMessage: Hashable, Sendable, CustomStringConvertible {
    /// A request succeeded.
    case ack(Ack)
    /// A message on a channel the client subscribed to.
    case message(ChannelMessage)
    /// A request failed; `id` is `nil` when the error answers no particular request.
    case error(ServerError)
    /// The answer to a ping.
    case pong(id: RequestID)
    /// Version 3's first frame (``TetherResumeSet``): the token this connection's subscriptions
    /// are kept under, whether the set the upgrade named was resumed, and when it was, the
    /// answer to each of its members (no `ok` follows for them).
    case resumeSet(token: String, resumed: Bool, answers: TetherResumeSet.Answers?)

    package var description: String {
        switch self {
        case .ack(let ack): "ack #\(ack.id)"
        case .message(let message): "message \(message.channel)#\(message.sequence.map(String.init) ?? "-")"
        case .error(let error): "error \(error)"
        case .pong(let id): "pong #\(id)"
        case .resumeSet(_, let resumed, let answers): "resume_set resumed=\(resumed)\(answers.map { " members=\($0.codes.count) gaps=\($0.gaps.count)" } ?? "")"
        }
    }
}

/// A successful reply.
package struct Ack: Hashable, Sendable {
    /// The request it answers.
    package var id: RequestID
    /// For `publish`: the message's sequence number. For `subscribe`: the channel's latest
    /// sequence number when the subscription began.
    package var sequence: UInt64?
    /// For `subscribe` with `since`: the server no longer had every message after `since`.
    package var gap: Bool

    package init(id: RequestID, sequence: UInt64? = nil, gap: Bool = false) {
        self.id = id
        self.sequence = sequence
        self.gap = gap
    }
}

public import SDK

/// The protocol's server side as a value (see `docs/PROTOCOL.md`): authentication, channels
/// with per-channel sequence numbers and a retention buffer, publish with acknowledgement and
/// fan-out, ping. It does no I/O: the in-memory ``TestServer`` and the NIO reference server
/// feed it frames and carry out its outputs.
public struct ServerCore: Sendable {
    /// Identifies one client connection.
    public typealias ConnectionID = UInt64

    /// What to do with a connection.
    public enum Output: Hashable, Sendable {
        case send(ConnectionID, TransportFrame)
        case close(ConnectionID, CloseCode, reason: String)
    }

    public struct Configuration: Sendable {
        /// Accepted tokens; `nil` accepts any token, or none.
        public var tokens: Set<String>?
        /// How many messages each channel keeps for `since` catch-up.
        public var retention: Int
        /// The codec's limits.
        public var codec: JSONWireCodec

        public init(tokens: Set<String>? = nil, retention: Int = 1000, codec: JSONWireCodec = JSONWireCodec()) {
            self.tokens = tokens
            self.retention = max(retention, 0)
            self.codec = codec
        }
    }

    private struct Channel {
        var latest: UInt64 = 0
        var retained: [ChannelMessage] = []
        var subscribers: Set<ConnectionID> = []
    }

    private struct Client {
        var isAuthenticated = false
        var channels: Set<String> = []
    }

    public var configuration: Configuration
    /// When set, every credential is rejected (fault injection).
    public var rejectsAllCredentials = false
    /// Subscriptions to these channels are refused with error `forbidden` (fault injection).
    public var rejectedChannels: Set<String> = []
    private var channels: [String: Channel] = [:]
    private var clients: [ConnectionID: Client] = [:]

    public init(_ configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The connections open now.
    public var connectionIDs: [ConnectionID] { Array(clients.keys) }

    /// The latest sequence number of `channel` (0 before its first message).
    public func latestSequence(of channel: String) -> UInt64 { channels[channel]?.latest ?? 0 }

    /// The number of subscribers of `channel`.
    public func subscriberCount(of channel: String) -> Int { channels[channel]?.subscribers.count ?? 0 }

    public mutating func connectionOpened(_ id: ConnectionID) {
        clients[id] = Client()
    }

    public mutating func connectionClosed(_ id: ConnectionID) {
        guard let client = clients.removeValue(forKey: id) else { return }
        for name in client.channels { channels[name]?.subscribers.remove(id) }
    }

    /// Handles a frame a client sent.
    public mutating func received(_ frame: TransportFrame, from id: ConnectionID) -> [Output] {
        guard var client = clients[id] else { return [] }
        let message: ClientMessage
        do {
            message = try configuration.codec.decodeClientMessage(frame)
        } catch {
            return reply(id, .error(ServerError(id: nil, code: "bad_request", message: error.description)))
        }
        guard client.isAuthenticated else {
            guard case .authenticate(let requestID, let token) = message else {
                return reply(id, .error(ServerError(id: message.id, code: "bad_request", message: "authenticate first")))
                    + [.close(id, .badRequest, reason: "authenticate first")]
            }
            if rejectsAllCredentials || !accepts(token) {
                return reply(id, .error(ServerError(id: requestID, code: ServerError.unauthorizedCode, message: "credentials rejected")))
                    + [.close(id, .unauthorized, reason: "credentials rejected")]
            }
            client.isAuthenticated = true
            clients[id] = client
            return reply(id, .ack(Ack(id: requestID)))
        }
        switch message {
        case .authenticate(let requestID, _):
            return reply(id, .error(ServerError(id: requestID, code: "bad_request", message: "already authenticated")))
        case .subscribe(let requestID, let name, _) where rejectedChannels.contains(name):
            return reply(id, .error(ServerError(id: requestID, code: "forbidden", message: "subscriptions to \(name) are refused")))
        case .subscribe(let requestID, let name, let since):
            var channel = channels[name] ?? Channel()
            channel.subscribers.insert(id)
            channels[name] = channel
            client.channels.insert(name)
            clients[id] = client
            var outputs: [Output] = []
            var missed: [ChannelMessage] = []
            var gap = false
            if let since, since < channel.latest {
                missed = channel.retained.filter { $0.sequence > since }
                let oldest = channel.retained.first?.sequence ?? channel.latest + 1
                gap = oldest > since + 1
            }
            outputs += reply(id, .ack(Ack(id: requestID, sequence: channel.latest, gap: gap)))
            for message in missed { outputs += reply(id, .message(message)) }
            return outputs
        case .unsubscribe(let requestID, let name):
            channels[name]?.subscribers.remove(id)
            client.channels.remove(name)
            clients[id] = client
            return reply(id, .ack(Ack(id: requestID)))
        case .publish(let requestID, let name, let data):
            let (sequence, outputs) = publish(data, to: name)
            return reply(id, .ack(Ack(id: requestID, sequence: sequence))) + outputs
        case .ping(let requestID):
            return reply(id, .pong(id: requestID))
        }
    }

    /// Publishes from the server side; returns the sequence number and the fan-out.
    public mutating func publish(_ data: JSONValue, to name: String) -> (UInt64, [Output]) {
        var channel = channels[name] ?? Channel()
        channel.latest += 1
        let message = ChannelMessage(channel: name, sequence: channel.latest, data: data)
        if configuration.retention > 0 {
            channel.retained.append(message)
            if channel.retained.count > configuration.retention {
                channel.retained.removeFirst(channel.retained.count - configuration.retention)
            }
        }
        channels[name] = channel
        var outputs: [Output] = []
        if let frame = try? configuration.codec.encode(ServerMessage.message(message)) {
            for subscriber in channel.subscribers.sorted() { outputs.append(.send(subscriber, frame)) }
        }
        return (message.sequence, outputs)
    }

    private func accepts(_ token: Secret?) -> Bool {
        guard let tokens = configuration.tokens else { return true }
        guard let token else { return false }
        return tokens.contains(token.revealedValue)
    }

    private func reply(_ id: ConnectionID, _ message: ServerMessage) -> [Output] {
        guard let frame = try? configuration.codec.encode(message) else { return [] }
        return [.send(id, frame)]
    }
}

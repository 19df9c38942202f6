package import SDK

/// The protocol's server side as a value (see `docs/PROTOCOL.md`): authentication, channels
/// with per-channel sequence numbers and a retention buffer, publish with acknowledgement,
/// idempotency keys and fan-out, ping. It does no I/O and reads no clock (the time comes in
/// through `now`): the in-memory ``TestServer`` and the NIO reference server feed it frames and
/// carry out its outputs.
///
/// What it promises, and every server of the protocol must: a publish is acknowledged only once
/// the message it makes is encoded and stored, so an acknowledged message is delivered (live or
/// on catch-up) or reported as a gap — never lost in silence; an error names the request's id
/// whenever the frame let it be read; a connection whose first message is not `auth` is closed
/// with 4400, and nothing it sends afterwards is applied.
package struct ServerCore: Sendable {
    /// Identifies one client connection.
    package typealias ConnectionID = UInt64

    /// What to do with a connection.
    package enum Output: Hashable, Sendable {
        case send(ConnectionID, TransportFrame)
        case close(ConnectionID, CloseCode, reason: String)
    }

    package struct Configuration: Sendable {
        /// Accepted tokens; `nil` accepts any token, or none.
        package var tokens: Set<String>?
        /// How many messages each channel keeps for `since` catch-up.
        package var retention: Int
        /// The codec's limits.
        package var codec: JSONWireCodec
        /// How long a publish's idempotency key is remembered (a re-sent publish with the same
        /// key within it is applied once).
        package var deduplicationWindow: Duration
        /// The most keys a channel remembers (the oldest go first), so a flood of publishes
        /// cannot grow memory without bound.
        package var maxKeysPerChannel: Int
        /// How long a closed connection's subscriptions are kept for a version-3 resume set.
        package var resumeSetLifetime: Duration
        /// The most closed connections' sets kept (the oldest go first).
        package var maxResumeSets: Int

        package init(
            tokens: Set<String>? = nil, retention: Int = 1000, codec: JSONWireCodec = JSONWireCodec(),
            deduplicationWindow: Duration = .seconds(120), maxKeysPerChannel: Int = 100_000,
            resumeSetLifetime: Duration = .seconds(300), maxResumeSets: Int = 10_000
        ) {
            self.tokens = tokens
            self.retention = max(retention, 0)
            self.codec = codec
            self.deduplicationWindow = deduplicationWindow
            self.maxKeysPerChannel = max(maxKeysPerChannel, 0)
            self.resumeSetLifetime = resumeSetLifetime
            self.maxResumeSets = max(maxResumeSets, 0)
        }
    }

    struct Client {
        var isAuthenticated = false
        /// Closed by the server: nothing more it sends is applied.
        var isClosing = false
        /// The channels it subscribed to, each with its base: the channel's latest sequence
        /// number when the subscribe was answered (the `ok`'s `seq`).
        var channels: [String: UInt64] = [:]
        /// Version 3: the token its subscriptions are kept under, and the credentials it opened with.
        var resumeToken: String?
        var credential: String?
    }

    package var configuration: Configuration
    /// When set, every credential is rejected (fault injection).
    package var rejectsAllCredentials = false
    /// Subscriptions to these channels are refused with error `forbidden` (fault injection).
    package var rejectedChannels: Set<String> = []
    /// Indicates that the server speaks version 2 (resume in the upgrade request) when a client
    /// offers it; false plays a version-1 server.
    package var acceptsVersion2 = true
    /// Indicates that the server speaks version 3 (a resume set kept under a token) when a client
    /// offers it and ``acceptsVersion2``; false plays a version-2 server.
    package var acceptsVersion3 = true
    var channels: [String: Channel] = [:]
    var clients: [ConnectionID: Client] = [:]
    /// Closed connections' subscriptions by resume token, and their tokens, oldest first.
    var keptSets = KeptSets()
    /// Open version-3 connections by their resume token.
    var openResumeTokens: [String: ConnectionID] = [:]
    let now: @Sendable () -> Duration

    /// - Parameter now: the time, on any monotonic origin (idempotency keys expire by it).
    package init(_ configuration: Configuration = Configuration(), now: @escaping @Sendable () -> Duration = ServerCore.uptime) {
        self.configuration = configuration
        self.now = now
    }

    /// Time since the first call, on the continuous clock.
    package static let uptime: @Sendable () -> Duration = {
        let origin = ContinuousClock.now
        return { ContinuousClock.now - origin }
    }()

    /// The connections open now.
    package var connectionIDs: [ConnectionID] { Array(clients.keys) }

    /// The latest sequence number of `channel` (0 before its first message).
    package func latestSequence(of channel: String) -> UInt64 { channels[channel]?.latest ?? 0 }

    /// Indicates that connection `id` has authenticated.
    package func isAuthenticated(_ id: ConnectionID) -> Bool { clients[id]?.isAuthenticated == true }

    /// The number of subscribers of `channel`.
    package func subscriberCount(of channel: String) -> Int { channels[channel]?.subscribers.count ?? 0 }

    /// Forgets every channel, message and key, as a restarted server without persistence does
    /// (connections are the caller's to close).
    package mutating func forgetHistory() {
        channels = [:]
        keptSets = KeptSets()
        openResumeTokens = [:]
        for id in clients.keys {
            clients[id]?.channels = [:]
            clients[id]?.resumeToken = nil
        }
    }

    package mutating func connectionOpened(_ id: ConnectionID) {
        clients[id] = Client()
    }

    /// A connection whose upgrade was answered `upgrade` (``answerUpgrade(subprotocols:headers:)``):
    /// version 2 starts authenticated and answers the subscriptions the request carried — each
    /// `ok` and its catch-up, in order, as if the client had sent `subscribe` with that `id`.
    package mutating func connectionOpened(_ id: ConnectionID, upgrade: UpgradeAnswer) -> [Output] {
        clients[id] = Client()
        guard case .upgraded(let request) = upgrade else { return [] }
        clients[id]?.isAuthenticated = true
        var outputs: [Output] = []
        // Room for every carried channel at once (a resumed set of thousands).
        clients[id]?.channels.reserveCapacity(request.entries.count)
        if let resumed = request.resumedSet {
            // Version 3: the token first, answering the resumed set's members; then only what
            // they missed; then the named entries, as in version 2.
            let token = Self.makeResumeToken()
            clients[id]?.resumeToken = token
            openResumeTokens[token] = id
            clients[id]?.credential = request.credential
            outputs = resumed ? joinSet(id, token: token, request.entries.prefix(request.setCount)) : reply(id, .resumeSet(token: token, resumed: false, answers: nil))
        }
        for entry in request.entries.dropFirst(request.setCount) { outputs += subscribe(id, requestID: entry.id, name: entry.channel, since: entry.since) }
        return outputs
    }

    /// How to answer a WebSocket upgrade request that offered `subprotocols` with `headers`
    /// (names in any case): version 3 when the client offered `tether.v3`, 2 when it offered
    /// `tether.v2` (credentials checked now: 401 refuses them; a malformed `Tether-Resume` or
    /// `Tether-Resume-Set` is 400), version 1 otherwise.
    package func answerUpgrade(subprotocols: [String], headers: [String: String]) -> UpgradeAnswer {
        let version3 = acceptsVersion3 && subprotocols.contains(TetherResumeSet.subprotocol)
        guard acceptsVersion2, version3 || subprotocols.contains(TetherUpgrade.subprotocol) else { return .version1 }
        func header(_ name: String) -> String? { headers.first { $0.key.lowercased() == name.lowercased() }?.value }
        let token = header(TetherUpgrade.authorizationHeader).flatMap(TetherUpgrade.bearerToken).map(Secret.init)
        if header(TetherUpgrade.authorizationHeader) != nil, token == nil {
            return .refuse(httpStatus: 401, reason: "the Authorization header is not 'Bearer <token>'")
        }
        guard !rejectsAllCredentials, accepts(token) else { return .refuse(httpStatus: 401, reason: "credentials rejected") }
        let named: [TetherUpgrade.Entry]
        do {
            named = try TetherUpgrade.decode(header(TetherUpgrade.resumeHeader) ?? "")
        } catch {
            return .refuse(httpStatus: 400, reason: "malformed \(TetherUpgrade.resumeHeader): \(error)")
        }
        guard version3 else { return .upgraded(UpgradeAnswer.Request(entries: named, subprotocol: TetherUpgrade.subprotocol)) }
        do throws(TetherUpgrade.MalformedHeader) {
            let (bySet, resumed) = try resumeSet(header(TetherResumeSet.header), named: named, credential: token?.revealedValue)
            return .upgraded(
                UpgradeAnswer.Request(entries: bySet + named, subprotocol: TetherResumeSet.subprotocol, resumedSet: resumed, setCount: bySet.count, credential: token?.revealedValue)
            )
        } catch {
            return .refuse(httpStatus: 400, reason: "malformed \(TetherResumeSet.header): \(error)")
        }
    }

    package mutating func connectionClosed(_ id: ConnectionID) {
        guard let client = clients.removeValue(forKey: id) else { return }
        for name in client.channels.keys { channels[name]?.subscribers.remove(id) }
        if let token = client.resumeToken { openResumeTokens[token] = nil }
        keep(client)
    }

    /// Handles a frame a client sent.
    package mutating func received(_ frame: TransportFrame, from id: ConnectionID) -> [Output] {
        // Flags only: a copy of the client held here would make every change to its channel set
        // copy the set (a connection that subscribes to a thousand channels).
        guard let isClosing = clients[id]?.isClosing, !isClosing, let isAuthenticated = clients[id]?.isAuthenticated else { return [] }
        let message: ClientMessage
        do {
            message = try configuration.codec.decodeClientMessage(frame)
        } catch {
            let requestID = configuration.codec.requestID(inRefused: frame)
            let outputs = reply(id, .error(ServerError(id: requestID, code: "bad_request", message: error.description)))
            guard isAuthenticated else { return outputs + close(id, .badRequest, reason: "authenticate first") }
            return outputs
        }
        guard isAuthenticated else {
            guard case .authenticate(let requestID, let token) = message else {
                return reply(id, .error(ServerError(id: message.id, code: "bad_request", message: "authenticate first")))
                    + close(id, .badRequest, reason: "authenticate first")
            }
            if rejectsAllCredentials || !accepts(token) {
                return reply(id, .error(ServerError(id: requestID, code: ServerError.unauthorizedCode, message: "credentials rejected")))
                    + close(id, .unauthorized, reason: "credentials rejected")
            }
            clients[id]?.isAuthenticated = true
            return reply(id, .ack(Ack(id: requestID)))
        }
        switch message {
        case .authenticate(let requestID, _):
            return reply(id, .error(ServerError(id: requestID, code: "bad_request", message: "already authenticated")))
        case .subscribe(let requestID, let name, let since):
            return subscribe(id, requestID: requestID, name: name, since: since)
        case .unsubscribe(let requestID, let name):
            channels[name]?.subscribers.remove(id)
            clients[id]?.channels[name] = nil
            return reply(id, .ack(Ack(id: requestID)))
        case .publish(let requestID, let name, let data, let key):
            if let key, let sequence = channels[name]?.keys.sequence(for: key, now: now(), window: configuration.deduplicationWindow) {
                // Applied before: the same answer, and no second delivery.
                return reply(id, .ack(Ack(id: requestID, sequence: sequence)))
            }
            do {
                let (sequence, outputs) = try publish(data, to: name, key: key)
                return reply(id, .ack(Ack(id: requestID, sequence: sequence))) + outputs
            } catch {
                let code = error.code == .oversize ? "too_large" : "bad_request"
                return reply(id, .error(ServerError(id: requestID, code: code, message: "not published: \(error.message)")))
            }
        case .ping(let requestID):
            return reply(id, .pong(id: requestID))
        }
    }

    private mutating func subscribe(_ id: ConnectionID, requestID: RequestID, name: String, since: UInt64?) -> [Output] {
        guard !rejectedChannels.contains(name) else {
            return reply(id, .error(ServerError(id: requestID, code: "forbidden", message: "subscriptions to \(name) are refused")))
        }
        // In place, in one lookup: a copy would make the change copy its buffers.
        let (latest, missed, gap) = channels[name, default: Channel()].join(id, since: since)
        clients[id]?.channels[name] = latest
        // The `ok` first, then the missed messages: a client applies the `ok` before them.
        var outputs = reply(id, .ack(Ack(id: requestID, sequence: latest, gap: gap)))
        outputs.reserveCapacity(outputs.count + missed.count)
        for message in missed { outputs.append(.send(id, message.frame)) }
        return outputs
    }

    /// Publishes from the server side; returns the sequence number and the fan-out. A message
    /// that cannot be encoded within the codec's limits is refused before it gets a number.
    package mutating func publish(_ data: JSONValue, to name: String) throws(CodecError) -> (UInt64, [Output]) {
        try publish(data, to: name, key: nil)
    }

    private mutating func publish(_ data: JSONValue, to name: String, key: String?) throws(CodecError) -> (UInt64, [Output]) {
        let sequence = (channels[name]?.latest ?? 0) + 1
        let frame = try configuration.codec.encode(ServerMessage.message(ChannelMessage(channel: name, sequence: sequence, data: data)))
        // Taken out while it changes: a copy left in `channels` would make every change copy
        // its buffers (the retained messages, the subscribers).
        var channel = channels.removeValue(forKey: name) ?? Channel()
        channel.latest = sequence
        if configuration.retention > 0 {
            channel.retain(Retained(sequence: sequence, frame: frame), limit: configuration.retention)
        }
        if let key {
            channel.keys.remember(key, sequence: sequence, now: now(), window: configuration.deduplicationWindow, limit: configuration.maxKeysPerChannel)
        }
        channels[name] = channel
        return (sequence, channel.subscribers.sorted().map { .send($0, frame) })
    }

    private func accepts(_ token: Secret?) -> Bool {
        guard let tokens = configuration.tokens else { return true }
        guard let token else { return false }
        return tokens.contains(token.revealedValue)
    }

    func reply(_ id: ConnectionID, _ message: ServerMessage) -> [Output] {
        guard let frame = try? configuration.codec.encode(message) else { return [] }
        return [.send(id, frame)]
    }

    /// Closes a connection: from now on nothing it sends is applied.
    private mutating func close(_ id: ConnectionID, _ code: CloseCode, reason: String) -> [Output] {
        clients[id]?.isClosing = true
        return [.close(id, code, reason: reason)]
    }
}

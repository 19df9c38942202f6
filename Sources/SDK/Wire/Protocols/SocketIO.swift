import ConnectionPolicy
package import Foundation

/// Socket.IO v4 (protocol 5) over Engine.IO v4, WebSocket transport only, default namespace:
/// the server speaks first (`0{"sid","pingInterval","pingTimeout",…}`); the client connects the
/// namespace with its auth payload (`40{…}`) → `40{"sid"}`, or `44{…}` (connect_error:
/// credentials rejected, no retry). The heartbeat is the server's: `2` every `pingInterval`,
/// answered `3`; silence past `pingInterval + pingTimeout` is a dead link (a watchdog timer).
/// The client cannot ping (`canProbe` is false). A server `41` means "do not reconnect".
///
/// Subscribing is an app convention, not a protocol primitive: a join event with an ack
/// (`42N["join","room"]` → `43N[…]`), a leave event, and a message event whose payload names
/// its channel. A publish is an event with an ack when ``acknowledgesPublishes``; without one it
/// ends as "sent, not confirmed".
package struct SocketIO: WireProtocolDescription {
    /// The app's events.
    package typealias Events = SocketIOEvents

    /// The path Engine.IO listens on, with its query (`EIO=4&transport=websocket`).
    package static let path = "/socket.io/"
    package static let query = "EIO=4&transport=websocket"
    /// The watchdog on the server's heartbeat.
    package static let heartbeat = WireTimer("socket.io-heartbeat")

    package var events: Events
    /// Indicates that the server's publish handler answers with an ack.
    package var acknowledgesPublishes: Bool
    /// The auth payload of the namespace connect (default: `{"token": …}`).
    package var authPayload: @Sendable (Secret?) -> JSONValue?

    /// The query item that carries the token in the URL, when the app opted in (see
    /// ``ServerProtocol/socketIO(events:acknowledgesPublishes:auth:credentialsInQuery:)``).
    package var credentialsQueryItem: String?

    package init(
        events: Events = Events(), acknowledgesPublishes: Bool = true,
        authPayload: @escaping @Sendable (Secret?) -> JSONValue? = ServerProtocol.tokenPayload,
        credentialsQueryItem: String? = nil
    ) {
        self.events = events
        self.acknowledgesPublishes = acknowledgesPublishes
        self.authPayload = authPayload
        self.credentialsQueryItem = credentialsQueryItem
    }

    package var capabilities: WireCapabilities {
        WireCapabilities(publishAcknowledgement: acknowledgesPublishes ? .always : .none, resumesSubscriptions: false, liveness: .serverPing, canProbe: false)
    }

    package func makeMachine() -> Machine { Machine(configuration: self) }

    package var subprotocols: [String] { [] }

    /// Engine.IO's path (unless the endpoint names one) and query; the token as a query item
    /// only when the app opted in, and then listed as a secret.
    package func handshake(endpoint: URL, credentials: Secret?) -> Handshake {
        guard var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false) else { return Handshake(url: endpoint) }
        if components.path.isEmpty || components.path == "/" { components.path = Self.path }
        var query = Self.query
        var secrets: [String] = []
        if let item = credentialsQueryItem, let credentials {
            let encoded = credentials.revealedValue.addingPercentEncoding(withAllowedCharacters: .urlUnreserved) ?? ""
            query += "&" + (item.addingPercentEncoding(withAllowedCharacters: .urlUnreserved) ?? item) + "=" + encoded
            secrets.append(credentials.revealedValue)
        }
        components.percentEncodedQuery = query
        return Handshake(url: components.url ?? endpoint, secrets: secrets)
    }

    package func makeConnectionMachine() -> any WireMachine { makeMachine() }

    package func ending(code: CloseCode?, reason: String) -> WireEnding { Self.ending(code: code, reason: reason) }

    /// A close from the server says little here (python-socketio closes with 1000 after a ping
    /// timeout): every close is retried; "do not reconnect" comes in band (`41`, `44`).
    package static func ending(code: CloseCode?, reason: String) -> WireEnding {
        let detail = (code.map { "code \($0)" } ?? "no close frame") + (reason.isEmpty ? "" : ": \(reason)")
        return WireEnding(code == nil ? DisconnectReason(.networkLost, detail: detail) : .serverClosed(detail), .retry)
    }

    /// One socket's Engine.IO and Socket.IO state.
    package struct Machine: WireMachine {
        private enum Step: Hashable, Sendable { case awaitingOpen, connecting }
        private enum Pending: Hashable {
            case join(SubscriptionID, resumed: Bool)
            case publish(RequestID)
        }

        private let configuration: SocketIO
        private var gate = HandshakeGate(Step.awaitingOpen)
        private var credentials: Secret?
        /// `pingInterval + pingTimeout`, from the open packet.
        private var heartbeatBound: Duration = .seconds(45)
        private var nextAck: UInt64 = 0
        private var pending: [UInt64: Pending] = [:]
        /// Active subscriptions by channel name (what message events are routed by).
        private var channels: [String: SubscriptionID] = [:]
        /// Probes waiting for the server's next packet (the client cannot ping Engine.IO v4).
        private var probes: [RequestID] = []

        init(configuration: SocketIO) {
            self.configuration = configuration
        }

        package mutating func start(credentials: Secret?) -> [WireAction] {
            // The server speaks first; until its open packet only the watchdog runs.
            self.credentials = credentials
            return [.arm(SocketIO.heartbeat, after: heartbeatBound)]
        }

        package mutating func receive(_ frame: TransportFrame) -> [WireAction] {
            guard !gate.isEnded else { return [] }
            guard case .text(let text) = frame, let engineType = text.first else {
                return fail("binary frames and empty packets are not handled (no binary attachments)")
            }
            let body = text.dropFirst()
            // Any packet from the server shows the link is alive: it answers the waiting probes.
            let answered = probes.map { WireAction.replied($0, .success(.acknowledged(position: nil, payload: nil))) }
            probes = []
            return answered + packet(engineType, body)
        }

        private mutating func packet(_ engineType: Character, _ body: Substring) -> [WireAction] {
            switch engineType {
            case "0":  // Engine.IO open
                guard gate.step == .awaitingOpen, let open = try? JSONParser.parse(String(body)),
                      let interval = open["pingInterval"]?.integerValue, let timeout = open["pingTimeout"]?.integerValue else {
                    return fail("a bad or unexpected open packet")
                }
                guard interval > 0, timeout > 0 else {
                    // A server setting no reconnect can change (python-engineio rounds a
                    // ping_interval under 1 s down to 0): say which, and do not retry for ever.
                    return end(WireEnding(.error(SocketIO.heartbeatSettingProblem(interval: interval, timeout: timeout)), .doNotRetry))
                }
                heartbeatBound = .milliseconds(interval + timeout)
                gate.advance(to: .connecting)
                var connect = "40"
                if let auth = configuration.authPayload(credentials) { connect += JSONWriter.text(auth) }
                credentials = nil
                return [.arm(SocketIO.heartbeat, after: heartbeatBound), .send(.text(connect))]
            case "2":  // Engine.IO ping from the server
                return [.send(.text("3" + body)), .arm(SocketIO.heartbeat, after: heartbeatBound)]
            case "1":  // Engine.IO close
                return end(WireEnding(.serverClosed("engine.io close"), .retry))
            case "6":  // noop
                return []
            case "4":
                return socketPacket(body)
            default:
                return fail("unknown Engine.IO packet type '\(engineType)'")
            }
        }

        private mutating func socketPacket(_ packet: Substring) -> [WireAction] {
            guard let type = packet.first else { return fail("an empty Socket.IO packet") }
            var rest = packet.dropFirst()
            // A namespace other than "/" would come first ("/admin,"): not supported, so refused.
            if rest.first == "/" { return fail("a namespace other than the default") }
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            rest = rest.dropFirst(digits.count)
            let ackID = digits.isEmpty ? nil : UInt64(digits)
            let payload = rest.isEmpty ? nil : try? JSONParser.parse(String(rest), maxDepth: 64)
            switch type {
            case "0":  // CONNECT answered: the namespace is joined
                guard gate.step == .connecting else { return [] }
                var actions: [WireAction] = [.ready]
                for command in gate.open() { actions += perform(command) }
                return actions
            case "4":  // CONNECT_ERROR: the server refused the namespace (credentials)
                let message = payload?["message"]?.stringValue ?? "connect_error"
                return end(WireEnding(DisconnectReason(.credentialsRejected, detail: message), .doNotRetry))
            case "1":  // DISCONNECT from the server: it does not want this client back
                return end(WireEnding(.serverClosed("io server disconnect"), .doNotRetry))
            case "2":  // EVENT
                guard let arguments = payload?.arrayValue, let name = arguments.first?.stringValue else { return fail("an event without a name") }
                guard name == configuration.events.message, arguments.count >= 2 else { return [] }
                let message = arguments[1]
                guard let channel = message[configuration.events.channelKey]?.stringValue, let subscription = channels[channel] else { return [] }
                return [.delivery(subscription, message, position: nil)]
            case "3":  // ACK
                guard let ackID, let waiting = pending.removeValue(forKey: ackID) else { return [] }
                let arguments = payload ?? .array([])
                let failure = Self.failure(in: arguments)
                switch waiting {
                case .join(let subscription, let resumed):
                    if let failure {
                        channels = channels.filter { $0.value != subscription }
                        return [.subscriptionFailed(subscription, failure)]
                    }
                    return [.subscribed(subscription, resumed ? .resumeUnsupported : .live(at: nil))]
                case .publish(let request):
                    if let failure { return [.replied(request, .failure(failure))] }
                    return [.replied(request, .success(.acknowledged(position: nil, payload: arguments)))]
                }
            default:
                return fail("a Socket.IO packet of type '\(type)' (binary attachments are not handled)")
            }
        }

        package mutating func perform(_ command: WireCommand) -> [WireAction] {
            guard gate.admits(command) else { return [] }
            switch command {
            case .subscribe(let subscription, let topic, let resume):
                channels[topic.name] = subscription
                let ack = makeAck(.join(subscription, resumed: resume != nil))
                return [event(configuration.events.join, .string(topic.name), ack: ack)]
            case .unsubscribe(let subscription):
                guard let channel = channels.first(where: { $0.value == subscription })?.key else { return [] }
                channels[channel] = nil
                return [event(configuration.events.leave, .string(channel), ack: nil)]
            case .publish(let request, let topic, let data, _):
                guard configuration.acknowledgesPublishes else {
                    return [event(configuration.events.publish, Self.message(data, in: topic.name, key: configuration.events.channelKey), ack: nil),
                            .replied(request, .success(.sentUnconfirmed))]
                }
                let ack = makeAck(.publish(request))
                return [event(configuration.events.publish, Self.message(data, in: topic.name, key: configuration.events.channelKey), ack: ack)]
            case .ping(let request):
                // Engine.IO v4 has no client ping (the server refuses one): the server's next
                // packet answers, within one heartbeat (the watchdog ends a silent link).
                probes.append(request)
                return []
            case .credentials:
                // Credentials go in the handshake: the next connection uses the new token.
                return []
            case .finished:
                return []
            case .presence(let request, _, _):
                return WireAction.presenceUnsupported(request)
            case .goodbye:
                gate.end()
                return [.send(.text("41")), .cancel(SocketIO.heartbeat)]
            }
        }

        package mutating func timerFired(_ timer: WireTimer) -> [WireAction] {
            guard timer == SocketIO.heartbeat, !gate.isEnded else { return [] }
            return end(WireEnding(DisconnectReason(.networkLost, detail: "no server ping within \(heartbeatBound)"), .retry))
        }

        private mutating func makeAck(_ waiting: Pending) -> UInt64 {
            let id = nextAck
            nextAck += 1
            pending[id] = waiting
            return id
        }

        private func event(_ name: String, _ argument: JSONValue, ack: UInt64?) -> WireAction {
            .send(.text("42" + (ack.map(String.init) ?? "") + JSONWriter.text([.string(name), argument])))
        }

        /// A publish's payload: the app's data with the channel named, as the message event
        /// carries it (an object gains the channel key; anything else is wrapped as `data`).
        private static func message(_ data: JSONValue, in channel: String, key: String) -> JSONValue {
            if case .object(var members) = data {
                members[key] = .string(channel)
                return .object(members)
            }
            return [key: .string(channel), "data": data]
        }

        /// An ack whose first argument says `{"ok": false, "error"?: …}` reports a failure.
        private static func failure(in arguments: JSONValue) -> WireFailure? {
            guard let first = arguments.arrayValue?.first, first["ok"] == .bool(false) else { return nil }
            return WireFailure(code: "rejected", message: first["error"]?.stringValue ?? "the server refused it", payload: arguments)
        }

        private mutating func end(_ ending: WireEnding) -> [WireAction] {
            gate.end()
            return [.cancel(SocketIO.heartbeat), .end(ending)]
        }

        private mutating func fail(_ message: String) -> [WireAction] {
            end(WireEnding(.error("socket.io: \(message)"), .retry))
        }
    }
}

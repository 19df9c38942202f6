import ConnectionPolicy

extension MQTT {
    /// One socket's MQTT state: the stream decoder's remainder, the packet ids waiting for an
    /// answer, the keep-alive, and the messages held until the subscription they belong to is
    /// made (the broker may deliver before SUBACK, and queues for a resumed session right after
    /// CONNACK). The session's state (``MQTTSessionState``) comes in and goes out with it.
    package struct Machine: WireMachine {
        enum Step: Hashable, Sendable { case opened, connecting }

        /// Where one of the core's subscriptions stands on this socket.
        struct Subscription {
            var filter: String
            var qos: MQTTQoS
            /// The last position handed to the core (positions number deliveries per
            /// subscription, continuing from the core's resume position).
            var position: UInt64
            var stage: Stage
            var resumed: Bool

            enum Stage: Equatable {
                /// SUBSCRIBE sent, waiting for SUBACK (packet id).
                case pending(UInt16)
                /// The broker's session holds it: made once the broker's backlog is in.
                case claimed
                case active
            }
        }

        /// A PINGREQ's purpose, answered in order.
        enum Probe: Equatable {
            case request(RequestID)
            case keepAlive
            /// Sent after a resumed session's CONNACK: the broker writes what it queued before
            /// answering, so the PINGRESP marks the end of the catch-up.
            case backlog
        }

        /// An inbound message not yet delivered to every subscription it belongs to.
        struct Held {
            var publish: MQTTPublish
            var deliveredTo: Set<SubscriptionID> = []
            /// The position each subscription gave it.
            var positions: [SubscriptionID: UInt64] = [:]
        }

        /// A QoS 1 message delivered to every subscription it belongs to, acknowledged once the
        /// app has finished it on each (``WireCommand/finished(_:through:)``), in arrival order.
        struct Unacknowledged {
            var packetID: UInt16
            var digest: Int
            var positions: [SubscriptionID: UInt64]
        }

        let configuration: MQTT
        package internal(set) var state: MQTTSessionState
        var gate = HandshakeGate(Step.opened)
        var decoder: MQTTStreamDecoder
        var keepAlive: Duration
        var sessionPresent = false
        /// Until the backlog marker's PINGRESP (resumed sessions only).
        var catchingUp = false
        var subscriptions: [SubscriptionID: Subscription] = [:]
        /// Subscription order, for deterministic output.
        var subscriptionOrder: [SubscriptionID] = []
        var pendingSubscribes: [UInt16: SubscriptionID] = [:]
        var pendingUnsubscribes: [UInt16: String] = [:]
        var publishes: [UInt16: RequestID] = [:]
        var probes: [Probe] = []
        var held: [Held] = []
        var unacknowledged: [Unacknowledged] = []
        /// How far the app has finished each subscription (its position counts).
        var finishedThrough: [SubscriptionID: UInt64] = [:]

        /// More messages than this waiting for their subscription end the catch-up early.
        static let heldLimit = 10_000

        init(configuration: MQTT, state: MQTTSessionState) {
            self.configuration = configuration
            self.state = state
            self.decoder = MQTTStreamDecoder(version: configuration.version, maximumPacketSize: configuration.maximumPacketSize)
            self.keepAlive = configuration.keepAlive
        }

        /// The keep-alive is negotiated in CONNECT: stretched before it goes (to at most 120 s,
        /// a configured longer one kept; a broker ends a client silent for 1.5 keep-alives, and
        /// a carrier's NAT forgets an idle mapping within minutes), and from the next connection
        /// after a change. Off (0) stays off.
        package mutating func keepAliveStretched(by factor: Int) -> [WireAction] {
            guard gate.step == .opened, configuration.keepAlive > .zero else { return [] }
            keepAlive = max(configuration.keepAlive, min(configuration.keepAlive * max(1, factor), MQTT.longestStretchedKeepAlive))
            return []
        }

        package var sessionState: WireSessionState? { WireSessionState(state) }
        package var durableSessionState: WireSessionState? { WireSessionState(state.durable) }

        package mutating func start(credentials: Secret?) -> [WireAction] {
            guard gate.step == .opened else { return [] }
            gate.advance(to: .connecting)
            var properties = MQTTProperties()
            if configuration.version == .v5 {
                properties.maximumPacketSize = UInt32(configuration.maximumPacketSize)
                if configuration.persistentSession { properties.sessionExpiry = UInt32(configuration.sessionExpiry.components.seconds) }
            }
            let connect = MQTTConnect(
                clientID: state.clientID, cleanStart: !configuration.persistentSession, keepAlive: UInt16(keepAlive.components.seconds),
                username: configuration.username, password: credentials.map { Array($0.revealedValue.utf8) }, properties: properties
            )
            return [send(.connect(connect))]
        }

        package mutating func receive(_ frame: TransportFrame) -> [WireAction] {
            guard !gate.isEnded else { return [] }
            guard case .binary(let bytes) = frame else { return fail("a text frame (MQTT over WebSocket is binary)") }
            // What came before a broken packet is handled; then the connection ends.
            let (packets, failure) = decoder.decode(bytes)
            var actions: [WireAction] = []
            for packet in packets {
                actions += handle(packet)
                if gate.isEnded { return actions }
            }
            if let failure { actions += fail(failure.description) }
            return actions
        }

        package mutating func perform(_ command: WireCommand) -> [WireAction] {
            guard gate.admits(command) else { return [] }
            switch command {
            case .subscribe(let id, let topic, let resume):
                return subscribe(id, topic, resume: resume)
            case .unsubscribe(let id):
                return unsubscribe(id)
            case .publish(let request, let topic, let data, let key):
                return publish(request, topic: topic.name, data: data, key: key)
            case .ping(let request):
                probes.append(.request(request))
                return [send(.pingreq)]
            case .credentials:
                // Credentials go in the handshake: the next connection uses the new token.
                return []
            case .finished(let id, let position):
                return finished(id, through: position)
            case .presence(let request, _, _):
                return WireAction.presenceUnsupported(request)
            case .goodbye:
                gate.end()
                return [send(.disconnect(code: 0, properties: MQTTProperties()))]
            }
        }

        package mutating func timerFired(_ timer: WireTimer) -> [WireAction] {
            guard gate.isReady else { return [] }
            switch timer {
            case MQTT.keepAliveTimer:
                probes.append(.keepAlive)
                return [send(.pingreq), .arm(MQTT.pingTimer, after: pingBound), .arm(MQTT.keepAliveTimer, after: pingInterval)]
            case MQTT.pingTimer:
                gate.end()
                return [.end(WireEnding(DisconnectReason(.networkLost, detail: "the broker did not answer a PINGREQ within \(pingBound)"), .retry))]
            default:
                return []
            }
        }

        /// A PINGREQ every three quarters of the keep-alive (the broker gives up after one and a
        /// half keep-alives of silence).
        var pingInterval: Duration { keepAlive * 3 / 4 }

        /// How long a PINGREQ may go unanswered: half the keep-alive, at least a second.
        var pingBound: Duration { max(keepAlive / 2, .seconds(1)) }

        // MARK: - Packets from the broker

        mutating func handle(_ packet: MQTTPacket) -> [WireAction] {
            if gate.step == .connecting {
                guard case .connack(let present, let code, let properties) = packet else { return fail("packet type \(packet.type) before CONNACK") }
                return connected(sessionPresent: present, code: code, properties: properties)
            }
            switch packet {
            case .publish(let publish):
                return received(publish)
            case .puback(let id, let code):
                state.acknowledge(packetID: id)
                guard let request = publishes.removeValue(forKey: id) else { return [] }
                if code >= 0x80 {
                    return [.replied(request, .failure(WireFailure(code: "mqtt_0x\(String(code, radix: 16))", message: "the broker refused the publish (PUBACK 0x\(String(code, radix: 16)))")))]
                }
                return [.replied(request, .success(.acknowledged(position: nil, payload: nil)))]
            case .suback(let id, let codes):
                return subscribeAnswered(id, code: codes.first ?? 0x80)
            case .unsuback(let id, _):
                pendingUnsubscribes[id] = nil
                return []
            case .pingresp:
                return pingAnswered()
            case .disconnect(let code, let properties):
                gate.end()
                return [.end(MQTT.disconnectEnding(code, reason: properties.reasonString))]
            case .connack:
                return fail("a second CONNACK")
            case .connect, .subscribe, .unsubscribe, .pingreq:
                return fail("a client's packet (type \(packet.type)) from the broker")
            }
        }

        mutating func connected(sessionPresent present: Bool, code: UInt8, properties: MQTTProperties) -> [WireAction] {
            guard code == 0 else {
                gate.end()
                return [.end(MQTT.connackEnding(code, version: configuration.version))]
            }
            let held = gate.open()
            sessionPresent = present && configuration.persistentSession
            if let assigned = properties.assignedClientID { state.clientID = assigned }
            if let serverKeepAlive = properties.serverKeepAlive { keepAlive = .seconds(Int(serverKeepAlive)) }
            if !sessionPresent {
                // A new session on the broker: it re-sends nothing.
                state.brokerFilters = [:]
                state.delivered = [:]
            }
            var actions: [WireAction] = []
            if keepAlive > .zero { actions.append(.arm(MQTT.keepAliveTimer, after: pingInterval)) }
            if sessionPresent {
                catchingUp = true
                probes.append(.backlog)
                actions.append(send(.pingreq))
            }
            actions.append(.ready)
            for command in held { actions += perform(command) }
            return actions
        }

        mutating func pingAnswered() -> [WireAction] {
            guard !probes.isEmpty else { return [] }
            var actions: [WireAction] = [.cancel(MQTT.pingTimer)]
            switch probes.removeFirst() {
            case .request(let request):
                actions.append(.replied(request, .success(.acknowledged(position: nil, payload: nil))))
            case .keepAlive:
                break
            case .backlog:
                actions += backlogDone()
            }
            return actions
        }

        // MARK: - Helpers

        func send(_ packet: MQTTPacket) -> WireAction {
            .send(.binary(packet.encoded(configuration.version)))
        }

        /// The broker broke the protocol: close (1002) and retry — a broker bug may be fixed
        /// by a restart, and the backoff keeps it from being a storm.
        mutating func fail(_ message: String) -> [WireAction] {
            gate.end()
            return [.end(WireEnding(.error("MQTT: \(message)"), .retry, closeCode: .protocolError))]
        }

        /// Packet ids this socket is waiting on (the session's in-flight ones are excluded by
        /// the allocator itself).
        var packetIDsInUse: Set<UInt16> {
            Set(pendingSubscribes.keys).union(pendingUnsubscribes.keys).union(publishes.keys)
        }
    }
}

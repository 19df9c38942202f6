package import SDK

/// The protocol adapters' fuzz harness (`Fuzz/`, `.ci/fuzz-adapters`), also replayed by the test
/// suite on every regression input: an input is split at newlines into frames, fed to a ready
/// connection machine holding one subscription and one pending publish, and then once more
/// whole as a binary frame (Phoenix's binary kinds too; MQTT, binary only: the pieces are binary frames, so packets arrive
/// split and concatenated, and its stream decoder must decode the same packets however the bytes
/// are cut, each surviving a re-encoding). Nothing may trap, and the machine's actions must make sense: nothing
/// after it ended the connection, deliveries only for the subscription it holds, replies only
/// to requests it was given, each at most once. It is SPI, not part of what apps see
/// (`@_spi(Fuzzing) import SDKTesting`).
@_spi(Fuzzing)
public enum ProtocolFuzzing {
    public enum Adapter: String, CaseIterable, Sendable {
        case graphQLTransportWS = "graphql-transport-ws"
        case socketIO = "socket.io"
        case mqtt
        case phoenix
        case supabaseRealtime = "supabase-realtime"
    }

    /// What was wrong with the machine's answer to `bytes`, or `nil` when nothing was.
    public static func check(_ adapter: Adapter, _ bytes: [UInt8]) -> String? {
        var machine: any WireMachine
        var opening: [TransportFrame]
        switch adapter {
        case .graphQLTransportWS:
            machine = GraphQLTransportWS().makeConnectionMachine()
            opening = [.text(#"{"type":"connection_ack"}"#)]
        case .socketIO:
            machine = SocketIO().makeConnectionMachine()
            opening = [.text(#"0{"sid":"f","upgrades":[],"pingTimeout":1000,"pingInterval":1000,"maxPayload":1000000}"#), .text("40")]
        case .mqtt:
            for version in [MQTTVersion.v3_1_1, .v5] {
                if let problem = MQTTDecoderCheck.check(bytes, version) { return "\(version): \(problem)" }
            }
            machine = MQTT(clientID: "fuzz", maximumPacketSize: 1 << 16).makeConnectionMachine()
            opening = [.binary(MQTTPacket.connack(sessionPresent: false, code: 0, properties: MQTTProperties()).encoded(.v3_1_1))]
        case .phoenix:
            // Ready at open. The join is ref 1, the publish ref 2, the ping ref 3.
            machine = PhoenixChannels().makeConnectionMachine()
            opening = []
        case .supabaseRealtime:
            machine = PhoenixChannels(credentials: .none, supabase: .init(apiKey: "key", now: { 0 })).makeConnectionMachine()
            opening = []
        }
        var audit = Audit()
        audit.take(machine.start(credentials: Secret("token")))
        for frame in opening { audit.take(machine.receive(frame)) }
        guard audit.isReady else { return "the machine never became ready on a well-formed handshake" }
        audit.requests = [1, 2]
        // Supabase: a private channel resuming with a replay, database changes and presence
        // tracked, so the frames reach the replay's verdict, the bindings and the announcements.
        let supabase = adapter == .supabaseRealtime
        let topic = supabase
            ? Topic.supabase("room-1", config: SupabaseChannelConfig(postgresChanges: [PostgresChangeFilter(event: "INSERT", table: "t")], isPrivate: true, replayLimit: 5, broadcastOrigin: .databaseOnly))
            : Topic("room-1", options: ["query": "subscription { x }"])
        audit.take(machine.perform(.subscribe(7, topic, resume: supabase ? .timestamp(milliseconds: 0) : nil)))
        if supabase { audit.take(machine.perform(.presence(nil, topic, state: ["s": 1]))) }
        audit.take(machine.perform(.publish(1, Topic("room-1"), ["text": "hi"], key: "k")))
        audit.take(machine.perform(.ping(2)))
        let frames = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        for frame in frames {
            audit.take(machine.receive(adapter == .mqtt ? .binary(Array(frame)) : .text(String(decoding: frame, as: UTF8.self))))
        }
        audit.take(machine.receive(.binary(bytes)))
        audit.take(machine.timerFired(WireTimer("socket.io-heartbeat")))
        audit.take(machine.timerFired(MQTT.keepAliveTimer))
        for timer in ["phoenix-reply-2", "phoenix-rejoin-room-1", "phoenix-rejoin-realtime:room-1", "phoenix-replay-end-realtime:room-1", "supabase-token-refresh",
                      "phoenix-keepalive", "phoenix-keepalive"] {
            audit.take(machine.timerFired(WireTimer(timer)))
        }
        audit.take(machine.perform(.credentials(nil)))
        audit.take(machine.perform(.credentials(Secret("fresh"))))
        return audit.problem
    }

    /// What the harness checks of a machine's actions (package: its own tests feed it bad ones).
    package struct Audit {
        package var isReady = false
        package var hasEnded = false
        /// The requests the machine was given, not yet answered.
        package var requests: Set<RequestID> = []
        package var problem: String?

        package init() {}

        package mutating func take(_ actions: [WireAction]) {
            for action in actions {
                guard problem == nil else { return }
                if hasEnded {
                    problem = "an action after the connection ended: \(action)"
                    return
                }
                switch action {
                case .ready:
                    if isReady { problem = "ready twice" }
                    isReady = true
                case .delivery(let subscription, _, _), .redelivery(let subscription, _, _), .deliveries(let subscription, _, _), .subscribed(let subscription, _), .subscriptionFailed(let subscription, _),
                     .subscriptionEnded(let subscription, _):
                    if subscription != 7 { problem = "an action for a subscription it does not hold: \(action)" }
                case .replied(let request, _):
                    if requests.remove(request) == nil { problem = "a reply to a request it was not given, or a second one: \(action)" }
                case .end:
                    hasEnded = true
                case .pipelining:
                    if isReady { problem = "pipelining after ready" }
                case .send, .arm, .cancel, .credentialsNeeded:
                    break
                }
            }
        }
    }
}

/// MQTT's stream decoder under the fuzzer: the packets (and the error, if any) do not depend on
/// where frames cut the bytes, and every packet decodes to itself after a re-encoding.
enum MQTTDecoderCheck {
    static func check(_ bytes: [UInt8], _ version: MQTTVersion) -> String? {
        let whole = decode([bytes], version)
        // Cuts derived from the input itself: every byte's low bits are a piece's length.
        var pieces: [[UInt8]] = []
        var index = 0
        while index < bytes.count {
            let length = Int(bytes[index] % 7) + 1
            pieces.append(Array(bytes[index..<min(bytes.count, index + length)]))
            index += length
        }
        let cut = decode(pieces, version)
        guard whole.packets == cut.packets, whole.failed == cut.failed else {
            return "decoded \(whole.packets.count) packets (failed: \(whole.failed)) whole, \(cut.packets.count) (failed: \(cut.failed)) in pieces"
        }
        for packet in whole.packets {
            let again = decode([packet.encoded(version)], version)
            guard again.packets == [packet], !again.failed else { return "\(packet) does not survive a re-encoding" }
        }
        return nil
    }

    private static func decode(_ frames: [[UInt8]], _ version: MQTTVersion) -> (packets: [MQTTPacket], failed: Bool) {
        var decoder = MQTTStreamDecoder(version: version, maximumPacketSize: 1 << 16)
        var packets: [MQTTPacket] = []
        for frame in frames {
            let (decoded, failure) = decoder.decode(frame)
            packets += decoded
            if failure != nil { return (packets, true) }
        }
        return (packets, false)
    }
}

import ConnectionPolicy
import Foundation

/// MQTT 3.1.1 or 5 over WebSocket (MQTT §6: subprotocol `mqtt`, binary frames, a frame holding
/// any number of packets or part of one), as mosquitto, EMQX, HiveMQ and AWS IoT speak it.
///
/// CONNECT carries the client id, the session's persistence and the credentials (the token is
/// the password); CONNACK's code says whether the credentials were rejected (no retry) or the
/// broker is unavailable (retry). A subscription is a SUBSCRIBE of its topic filter (wildcards
/// allowed; deliveries are routed back to every subscription whose filter matches); a publish
/// is a PUBLISH at the configured QoS — QoS 1's PUBACK is its acknowledgement, QoS 0 ends
/// "sent, not confirmed". An inbound QoS 1 message is acknowledged after the app was handed it,
/// never before. PINGREQ/PINGRESP are the keep-alive and the probe; the goodbye is DISCONNECT,
/// so no will message is sent.
///
/// With a persistent session the broker keeps the subscriptions and queues QoS 1 messages while
/// the app is away: when CONNACK says the session is present, the replay does not resubscribe,
/// what the broker queued is delivered and counted as caught up, and QoS 1 publishes that were
/// never acknowledged are re-sent with DUP set and their original packet ids. The client id,
/// those publishes and the filters the broker holds are the session's (``MQTTSessionState``),
/// kept across sockets; everything else is per socket (``Machine``).
package struct MQTT: WireProtocolDescription {
    package static let subprotocol = "mqtt"
    /// The keep-alive: time to send a PINGREQ.
    package static let keepAliveTimer = WireTimer("mqtt-keepalive")
    /// The longest a stretched keep-alive goes (`Liveness.keepAliveStretch`).
    package static let longestStretchedKeepAlive = Duration.seconds(120)
    /// The watchdog on an unanswered PINGREQ.
    package static let pingTimer = WireTimer("mqtt-pingresp")

    package var version: MQTTVersion
    /// The app's client id (`nil`: each session makes one, kept across its reconnects).
    package var clientID: String?
    package var username: String?
    package var qos: MQTTQoS
    /// Whether the broker keeps the session (clean session off / a session expiry).
    package var persistentSession: Bool
    /// MQTT 5's session expiry, for a persistent session.
    package var sessionExpiry: Duration
    package var keepAlive: Duration
    package var maximumPacketSize: Int

    package init(
        version: MQTTVersion = .v3_1_1, clientID: String? = nil, username: String? = nil, qos: MQTTQoS = .atLeastOnce,
        persistentSession: Bool = true, sessionExpiry: Duration = .seconds(3600), keepAlive: Duration = .seconds(60),
        maximumPacketSize: Int = 1 << 20
    ) {
        self.version = version
        self.clientID = clientID
        self.username = username
        self.qos = qos
        self.persistentSession = persistentSession
        self.sessionExpiry = sessionExpiry
        self.keepAlive = keepAlive
        self.maximumPacketSize = maximumPacketSize
    }

    package var capabilities: WireCapabilities {
        var capabilities = WireCapabilities(
            publishAcknowledgement: qos == .atLeastOnce ? .always : .none, resumesSubscriptions: persistentSession,
            liveness: .clientPing, canProbe: true, deduplicatesPublishes: qos == .atLeastOnce
        )
        capabilities.acknowledgesWhenFinished = true
        return capabilities
    }

    package var subprotocols: [String] { [Self.subprotocol] }

    package func makeConnectionMachine() -> any WireMachine { makeMachine() }

    package func makeConnectionMachine(continuing state: WireSessionState?) -> any WireMachine {
        makeMachine(continuing: continuing(state, as: MQTTSessionState.self))
    }

    /// A machine continuing `state` (a new session's when nil: its client id made here).
    package func makeMachine(continuing state: MQTTSessionState? = nil) -> Machine {
        Machine(configuration: self, state: state ?? MQTTSessionState(clientID: clientID ?? Self.makeClientID()))
    }

    /// `tether-` and 16 random hex digits.
    static func makeClientID() -> String {
        var generator = SystemRandomNumberGenerator()
        let hex = String(generator.next() as UInt64, radix: 16)
        return "tether-" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    package var settingsProblem: String? {
        if let clientID, clientID.isEmpty || clientID.utf8.count > 65_535 || clientID.contains("\0") {
            return "the MQTT client id must be 1 to 65,535 bytes without NUL"
        }
        if let username, username.utf8.count > 65_535 || username.contains("\0") { return "the MQTT username must be at most 65,535 bytes without NUL" }
        if keepAlive < .zero || keepAlive > .seconds(65_535) { return "the MQTT keep-alive must be 0 (off) to 65,535 s (got \(keepAlive))" }
        if sessionExpiry < .zero || sessionExpiry > .seconds(UInt32.max) { return "the MQTT session expiry must be 0 to 2^32-1 s (got \(sessionExpiry))" }
        if !(64...268_435_460).contains(maximumPacketSize) { return "the MQTT maximum packet size must be 64 bytes to 256 MiB (got \(maximumPacketSize))" }
        return nil
    }

    /// A broker ends a connection by closing it; what was wrong came in a CONNACK or an MQTT 5
    /// DISCONNECT (the machine's to say). A bare close is retried.
    package func ending(code: CloseCode?, reason: String) -> WireEnding {
        let detail = (code.map { "code \($0)" } ?? "no close frame") + (reason.isEmpty ? "" : ": \(reason)")
        return WireEnding(code == nil ? DisconnectReason(.networkLost, detail: detail) : .serverClosed(detail), .retry)
    }

    /// What a CONNACK refusal means (3.1.1 return codes 1–5, MQTT 5 reason codes 0x80 and up).
    package static func connackEnding(_ code: UInt8, version: MQTTVersion) -> WireEnding {
        let hex = "0x" + String(code, radix: 16)
        switch code {
        case 4, 5, 0x86, 0x87, 0x8A, 0x8C:
            return WireEnding(DisconnectReason(.credentialsRejected, detail: "the broker refused the credentials (CONNACK \(hex))"), .doNotRetry)
        case 1, 0x84:
            let detail = version == .v5 ? "the broker does not speak MQTT 5: use MQTTVersion.v3_1_1" : "the broker does not speak MQTT 3.1.1"
            return WireEnding(.error("\(detail) (CONNACK \(hex))"), .doNotRetry)
        case 2, 0x85:
            return WireEnding(.error("the broker rejected the client id (CONNACK \(hex))"), .doNotRetry)
        case 0x81, 0x82, 0x95, 0x99, 0x9A, 0x9B:
            return WireEnding(.error("the broker refused how the client connects (CONNACK \(hex))"), .doNotRetry)
        default:
            return WireEnding(.serverClosed("the broker is unavailable (CONNACK \(hex))"), .retry)
        }
    }

    /// What an MQTT 5 DISCONNECT from the broker means.
    package static func disconnectEnding(_ code: UInt8, reason: String?) -> WireEnding {
        let detail = "DISCONNECT 0x\(String(code, radix: 16))" + (reason.map { ": \($0)" } ?? "")
        switch code {
        case 0x8E:
            // Another client connected with this client id: reconnecting would take it back and
            // the two would fight forever.
            return WireEnding(.serverClosed("the session was taken over by another client with the same client id (\(detail))"), .doNotRetry)
        case 0x86, 0x87, 0x8A, 0x8C:
            return WireEnding(DisconnectReason(.credentialsRejected, detail: detail), .doNotRetry)
        case 0x81, 0x82, 0x84, 0x85, 0x90, 0x95, 0x99, 0x9A, 0x9B:
            return WireEnding(.serverClosed("the broker ended the connection for a client error (\(detail))"), .doNotRetry)
        default:
            return WireEnding(.serverClosed(detail), .retry)
        }
    }
}

/// The MQTT versions Tether speaks: 3.1.1 (protocol level 4) and 5.
///
/// An input you choose; a later release may add a version, so a `switch` over it needs a `default`.
public enum MQTTVersion: UInt8, Hashable, Sendable, CustomStringConvertible {
    /// MQTT 3.1.1 (protocol level 4).
    case v3_1_1 = 4
    /// MQTT 5.0 (protocol level 5).
    case v5 = 5

    public var description: String { self == .v5 ? "MQTT 5" : "MQTT 3.1.1" }
}

/// The delivery guarantee of a subscription or a publish. QoS 2 is not offered: Tether's outbox
/// and the per-message dedupe key give the app "once" on top of QoS 1.
///
/// MQTT's three levels; these cases are all there will be.
@frozen
public enum MQTTQoS: UInt8, Hashable, Sendable, Codable {
    /// At most once: no acknowledgement (a publish ends `sentUnconfirmed`).
    case atMostOnce = 0
    /// At least once: acknowledged (PUBACK); re-sent with DUP after a reconnect until it is.
    case atLeastOnce = 1
}

/// The MQTT 5 properties Tether reads or writes; any other valid property is skipped.
package struct MQTTProperties: Hashable, Sendable {
    package var sessionExpiry: UInt32?
    package var receiveMaximum: UInt16?
    package var maximumPacketSize: UInt32?
    package var assignedClientID: String?
    package var serverKeepAlive: UInt16?
    package var reasonString: String?

    package init(sessionExpiry: UInt32? = nil, receiveMaximum: UInt16? = nil, maximumPacketSize: UInt32? = nil, assignedClientID: String? = nil, serverKeepAlive: UInt16? = nil, reasonString: String? = nil) {
        self.sessionExpiry = sessionExpiry
        self.receiveMaximum = receiveMaximum
        self.maximumPacketSize = maximumPacketSize
        self.assignedClientID = assignedClientID
        self.serverKeepAlive = serverKeepAlive
        self.reasonString = reasonString
    }
}

/// A CONNECT's contents.
package struct MQTTConnect: Hashable, Sendable {
    package var clientID: String
    package var cleanStart: Bool
    /// Seconds; 0 turns the keep-alive off.
    package var keepAlive: UInt16
    package var username: String?
    package var password: [UInt8]?
    package var properties = MQTTProperties()

    package init(clientID: String, cleanStart: Bool, keepAlive: UInt16, username: String? = nil, password: [UInt8]? = nil, properties: MQTTProperties = MQTTProperties()) {
        self.clientID = clientID
        self.cleanStart = cleanStart
        self.keepAlive = keepAlive
        self.username = username
        self.password = password
        self.properties = properties
    }
}

/// An application message on the wire.
package struct MQTTPublish: Hashable, Sendable {
    package var topic: String
    package var payload: [UInt8]
    package var qos: MQTTQoS
    /// Set on a re-send of a QoS 1 message.
    package var duplicate: Bool
    package var retain: Bool
    /// Present exactly when `qos` is above 0.
    package var packetID: UInt16?

    package init(topic: String, payload: [UInt8], qos: MQTTQoS, duplicate: Bool = false, retain: Bool = false, packetID: UInt16? = nil) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.duplicate = duplicate
        self.retain = retain
        self.packetID = packetID
    }
}

/// One MQTT control packet, either direction (the client's and a broker's: tests and fuzzers
/// play the broker). MQTT 5's reason codes ride in the `code` fields (3.1.1's CONNACK return
/// codes too); QoS 2 (PUBREC/PUBREL/PUBCOMP) and AUTH are not spoken.
package enum MQTTPacket: Hashable, Sendable {
    case connect(MQTTConnect)
    case connack(sessionPresent: Bool, code: UInt8, properties: MQTTProperties)
    case publish(MQTTPublish)
    case puback(UInt16, code: UInt8)
    case subscribe(UInt16, [(filter: String, qos: MQTTQoS)])
    /// Per filter: the granted QoS, or a failure code (0x80 and above).
    case suback(UInt16, codes: [UInt8])
    case unsubscribe(UInt16, [String])
    case unsuback(UInt16, codes: [UInt8])
    case pingreq
    case pingresp
    case disconnect(code: UInt8, properties: MQTTProperties)

    package static func == (lhs: MQTTPacket, rhs: MQTTPacket) -> Bool {
        lhs.encoded(.v5) == rhs.encoded(.v5)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(encoded(.v5))
    }

    /// The packet type (the fixed header's upper four bits).
    package var type: UInt8 {
        switch self {
        case .connect: 1
        case .connack: 2
        case .publish: 3
        case .puback: 4
        case .subscribe: 8
        case .suback: 9
        case .unsubscribe: 10
        case .unsuback: 11
        case .pingreq: 12
        case .pingresp: 13
        case .disconnect: 14
        }
    }
}

/// What an MQTT session keeps across its sockets (the broker's session is keyed by the client
/// id, so this is its client side): handed from one socket's machine to the next by the core
/// (``WireMachine/sessionState``).
package struct MQTTSessionState: Hashable, Sendable, WireSessionStateValue {
    package static let kind = "mqtt-session/1"

    /// A QoS 1 publish sent and not acknowledged: re-sent with DUP and the same packet id when
    /// the core sends its idempotency key again.
    package struct InFlight: Hashable, Sendable, Codable {
        package var key: String
        package var packetID: UInt16
    }

    /// At most this many unacknowledged publishes are remembered (the oldest are forgotten: the
    /// core gives up on a publish after its outbox timeout and never re-sends it).
    package static let inFlightLimit = 4096

    package var clientID: String
    /// The filters the broker's session holds (granted on a persistent session), with the QoS.
    package var brokerFilters: [String: MQTTQoS] = [:]
    /// Oldest first.
    package var inFlight: [InFlight] = []
    /// Inbound QoS 1 messages acknowledged, by the broker's packet id: the digest of their
    /// topic and payload. A re-send (DUP) of one of them is acknowledged again, not delivered
    /// twice; a new message with that id (DUP clear) replaces the entry.
    package var acknowledged: [UInt16: Int] = [:]
    /// The last packet id handed out (ids are 1…65,535 and wrap).
    package var lastPacketID: UInt16 = 0

    package init(clientID: String) {
        self.clientID = clientID
    }

    /// The packet id a re-send of `key` uses, if it was sent before and not acknowledged.
    package func packetID(resending key: String) -> UInt16? {
        inFlight.first { $0.key == key }?.packetID
    }

    package mutating func remember(_ key: String, packetID: UInt16) {
        inFlight.append(InFlight(key: key, packetID: packetID))
        if inFlight.count > Self.inFlightLimit { inFlight.removeFirst(inFlight.count - Self.inFlightLimit) }
    }

    package mutating func acknowledge(packetID: UInt16) {
        inFlight.removeAll { $0.packetID == packetID }
    }

    /// The next packet id not in `used` (nil when all 65,535 are).
    package mutating func allocatePacketID(excluding used: Set<UInt16>) -> UInt16? {
        var candidate = lastPacketID
        for _ in 0..<Int(UInt16.max) {
            candidate = candidate == UInt16.max ? 1 : candidate + 1
            if !used.contains(candidate), !inFlight.contains(where: { $0.packetID == candidate }) {
                lastPacketID = candidate
                return candidate
            }
        }
        return nil
    }

    /// What identifies an inbound message for the re-send check: FNV-1a over the topic, a
    /// zero byte and the payload — the same in every process (`Hasher` is seeded per process,
    /// and this digest outlives it in a store).
    package static func digest(_ publish: MQTTPublish) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        for byte in publish.topic.utf8 { mix(byte) }
        mix(0)
        for byte in publish.payload { mix(byte) }
        return Int(bitPattern: UInt(truncatingIfNeeded: hash))
    }
}

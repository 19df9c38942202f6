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
    /// Inbound QoS 1 messages acknowledged (PUBACK sent), by the broker's packet id: the digest
    /// of their topic and payload. A re-send (DUP) of one of them is acknowledged again, not
    /// delivered twice; a new message with that id (DUP clear) replaces the entry.
    package var acknowledged: [UInt16: Int] = [:]
    /// Inbound QoS 1 messages delivered and not acknowledged yet (the app has not finished
    /// them), by packet id. Within the process, a re-send of one on the next socket is not
    /// delivered again — the core holds it — and is acknowledged once the app has finished it.
    /// Not ``durable``: after a relaunch the app may never have finished it, so it comes again.
    package var delivered: [UInt16: Delivered] = [:]
    /// The last packet id handed out (ids are 1…65,535 and wrap).
    package var lastPacketID: UInt16 = 0

    /// A message delivered on an earlier socket of this process: its digest, and the position
    /// it had on each filter it was delivered on (the core resumes a channel's positions where
    /// they stood, so they mean the same on the next socket).
    package struct Delivered: Hashable, Sendable, Codable {
        package var digest: Int
        package var positions: [String: UInt64]
    }

    /// What outlives the process: all but ``delivered``.
    package var durable: MQTTSessionState {
        var state = self
        state.delivered = [:]
        return state
    }

    /// The position `publish` (a re-send, DUP) had when an earlier socket of this process
    /// delivered it on `filter`, if it did.
    package func earlierDelivery(of publish: MQTTPublish, on filter: String) -> UInt64? {
        guard publish.duplicate, let id = publish.packetID, let earlier = delivered[id], earlier.digest == Self.digest(publish) else { return nil }
        return earlier.positions[filter]
    }

    /// The app finished `packetID`'s message and it was acknowledged.
    package mutating func acknowledged(_ packetID: UInt16, digest: Int) {
        delivered[packetID] = nil
        acknowledged[packetID] = digest
    }

    package init(clientID: String) {
        self.clientID = clientID
    }

    private enum CodingKeys: String, CodingKey { case clientID, brokerFilters, inFlight, acknowledged, delivered, lastPacketID }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        clientID = try container.decode(String.self, forKey: .clientID)
        brokerFilters = try container.decode([String: MQTTQoS].self, forKey: .brokerFilters)
        inFlight = try container.decode([InFlight].self, forKey: .inFlight)
        acknowledged = try container.decode([UInt16: Int].self, forKey: .acknowledged)
        // Absent from what a store holds (``durable``).
        delivered = try container.decodeIfPresent([UInt16: Delivered].self, forKey: .delivered) ?? [:]
        lastPacketID = try container.decode(UInt16.self, forKey: .lastPacketID)
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

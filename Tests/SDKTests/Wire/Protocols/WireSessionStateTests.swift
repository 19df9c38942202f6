import Foundation
@testable import SDK
import Testing

/// A protocol's session state as a Codable value of its own: encoded by its machine, decoded
/// only by its protocol, the same after the round trip a store would make.
@Suite("WireSessionState: each protocol's session state, Codable")
struct WireSessionStateTests {
    @Test("MQTT: client id, broker filters, in-flight publishes, acknowledged digests and the packet counter survive the round trip")
    func mqtt() throws {
        var state = MQTTSessionState(clientID: "tether-0123456789abcdef")
        state.brokerFilters = ["a/#": .atLeastOnce, "b": .atMostOnce]
        state.remember("key-1", packetID: 7)
        state.acknowledged[9] = MQTTSessionState.digest(MQTTPublish(topic: "t", payload: Array("x".utf8), qos: .atLeastOnce))
        _ = state.allocatePacketID(excluding: [])
        let stored = try JSONDecoder().decode(WireSessionState.self, from: JSONEncoder().encode(WireSessionState(state)))
        #expect(stored.kind == "mqtt-session/1")
        #expect(try stored.decoded(as: MQTTSessionState.self) == state)
        #expect(try stored.decoded(as: PhoenixSessionState.self) == nil, "another protocol's state is not this one's")
    }

    @Test("MQTT's digest of an inbound message is the same in every process (FNV-1a, not the per-process seeded Hasher)")
    func stableDigest() {
        #expect(MQTTSessionState.digest(MQTTPublish(topic: "t", payload: Array("x".utf8), qos: .atLeastOnce)) == 6_227_842_875_446_405_427)
    }

    @Test("Phoenix: the ref counter and the ids seen per topic survive the round trip; a machine continues from it")
    func phoenix() throws {
        var state = PhoenixSessionState()
        state.nextRef = 41
        let first = state.remember("m1", on: "realtime:room", at: 1_700)
        #expect(first)
        state.noteClientBroadcast(on: "realtime:chat")
        let stored = WireSessionState(state)
        let back = try #require(try stored.decoded(as: PhoenixSessionState.self))
        #expect(back == state)
        #expect(back.lastDelivered(on: "realtime:room") == "m1" && back.sawClientBroadcast(on: "realtime:chat"))
        #expect(back.deliveredAt("m1", on: "realtime:room") == 1_700, "with the position it was delivered at")
        var copy = back
        let again = copy.remember("m1", on: "realtime:room", at: 1_800)
        #expect(!again, "an id seen before the round trip is still seen")
    }

    @Test("a damaged state of the protocol's kind throws (the store says it was lost); the protocol's machine then starts a new session")
    func damaged() throws {
        let damaged = WireSessionState(kind: MQTTSessionState.kind, data: Data("{\"clientID\":".utf8))
        #expect(throws: DecodingError.self) { try damaged.decoded(as: MQTTSessionState.self) }
        let mqtt = MQTT(clientID: "c")
        #expect(mqtt.continuing(damaged, as: MQTTSessionState.self) == nil)
    }

    @Test("a state made in this process is handed back as made, without decoding; its identity and its encoding are its kind and bytes")
    func madeInProcess() throws {
        let state = UndecodableState(count: 3)
        let made = WireSessionState(state)
        #expect(try made.decoded(as: UndecodableState.self) == state, "the value made, not a decoding (which would throw)")
        let fromBytes = WireSessionState(kind: made.kind, data: made.data)
        #expect(throws: DecodingError.self) { try fromBytes.decoded(as: UndecodableState.self) }
        #expect(made == fromBytes && made.hashValue == fromBytes.hashValue)
        let stored = try JSONDecoder().decode(WireSessionState.self, from: JSONEncoder().encode(made))
        #expect(stored == made)
        #expect(throws: DecodingError.self) { try stored.decoded(as: UndecodableState.self) }
    }
}

/// A state whose decoding always fails: what a decoded state reads back is decoded, never cached.
private struct UndecodableState: WireSessionStateValue, Equatable {
    static let kind = "undecodable/1"
    var count: Int

    static func decoded(from data: Data) throws -> Self {
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "never decodes"))
    }
}

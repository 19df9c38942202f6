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
}

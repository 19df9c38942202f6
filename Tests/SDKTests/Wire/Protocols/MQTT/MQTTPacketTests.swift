import Foundation
@testable import SDK
import Testing

/// MQTT's packet codec: every packet both ways in both versions, the remaining length at every
/// size, frames holding several packets or part of one, and what is not MQTT.
@Suite("MQTT packets")
struct MQTTPacketTests {
    static func hex(_ text: String) -> [UInt8] { [UInt8](hex: text) }

    static let packets: [MQTTPacket] = [
        .connect(MQTTConnect(clientID: "tether-probe", cleanStart: false, keepAlive: 60, username: "app", password: Array("s3cret".utf8), properties: MQTTProperties(sessionExpiry: 3600, maximumPacketSize: 1 << 20))),
        .connect(MQTTConnect(clientID: "c", cleanStart: true, keepAlive: 0)),
        .connack(sessionPresent: true, code: 0, properties: MQTTProperties(assignedClientID: "x", serverKeepAlive: 30)),
        .connack(sessionPresent: false, code: 0x86, properties: MQTTProperties(reasonString: "bad credentials")),
        .publish(MQTTPublish(topic: "t/1", payload: Array("missed-1".utf8), qos: .atLeastOnce, duplicate: true, retain: true, packetID: 7)),
        .publish(MQTTPublish(topic: "t/é", payload: [], qos: .atMostOnce)),
        .puback(7, code: 0), .puback(65_535, code: 0x10),
        .subscribe(1, [("t/#", .atLeastOnce), ("a/+/b", .atMostOnce)]),
        .suback(1, codes: [1, 0x80]),
        .unsubscribe(2, ["t/#"]), .unsuback(2, codes: [0]),
        .pingreq, .pingresp,
        .disconnect(code: 0, properties: MQTTProperties()),
        .disconnect(code: 0x8E, properties: MQTTProperties(reasonString: "session taken over")),
    ]

    func decodeAll(_ bytes: [UInt8], _ version: MQTTVersion) throws -> [MQTTPacket] {
        var decoder = MQTTStreamDecoder(version: version, maximumPacketSize: 1 << 20)
        let packets = try decoder.append(bytes)
        #expect(decoder.pendingByteCount == 0)
        return packets
    }

    @Test("every packet survives encode → decode in MQTT 5", arguments: packets)
    func roundTripV5(_ packet: MQTTPacket) throws {
        #expect(try decodeAll(packet.encoded(.v5), .v5) == [packet])
    }

    @Test("in 3.1.1 every packet survives without what 3.1.1 cannot say")
    func roundTripV311() throws {
        for packet in Self.packets {
            let decoded = try decodeAll(packet.encoded(.v3_1_1), .v3_1_1)
            #expect(decoded.count == 1)
            #expect(decoded.first?.encoded(.v3_1_1) == packet.encoded(.v3_1_1))
        }
    }

    @Test("mosquitto's bytes from the recorded transcript (A.1)")
    func transcript() throws {
        #expect(try decodeAll(Self.hex("20020000"), .v3_1_1) == [.connack(sessionPresent: false, code: 0, properties: MQTTProperties())])
        #expect(try decodeAll(Self.hex("20020100"), .v3_1_1) == [.connack(sessionPresent: true, code: 0, properties: MQTTProperties())])
        #expect(try decodeAll(Self.hex("9003000101"), .v3_1_1) == [.suback(1, codes: [1])])
        #expect(try decodeAll(Self.hex("40020007") + Self.hex("40020008"), .v3_1_1) == [.puback(7, code: 0), .puback(8, code: 0)])
        let missed = MQTTPublish(topic: "t/1", payload: Array("missed-1".utf8), qos: .atLeastOnce, packetID: 1)
        #expect(try decodeAll(Self.hex("320f0003742f3100016d69737365642d31"), .v3_1_1) == [.publish(missed)])
        #expect(MQTTPacket.pingreq.encoded(.v3_1_1) == [0xC0, 0])
        #expect(MQTTPacket.disconnect(code: 0, properties: MQTTProperties()).encoded(.v5) == [0xE0, 0], "a normal DISCONNECT is two bytes in 5 too")
    }

    @Test("the remaining length in 1, 2, 3 and 4 bytes, at each boundary")
    func remainingLengths() throws {
        for size in [0, 127, 128, 16_383, 16_384, 2_097_151, 2_097_152, 3_000_000] {
            let packet = MQTTPacket.publish(MQTTPublish(topic: "t", payload: [UInt8](repeating: 0x41, count: max(0, size - 3)), qos: .atMostOnce))
            let bytes = packet.encoded(.v3_1_1)
            let expectedHeader = size < 128 ? 2 : size < 16_384 ? 3 : size < 2_097_152 ? 4 : 5
            #expect(bytes.count - max(3, size) == expectedHeader, "size \(size)")
            var decoder = MQTTStreamDecoder(version: .v3_1_1, maximumPacketSize: 4 << 20)
            #expect(try decoder.append(bytes) == [packet])
        }
    }

    @Test("a frame with several packets, and packets split at every byte")
    func streaming() throws {
        let stream = Self.packets.flatMap { $0.encoded(.v5) }
        #expect(try decodeAll(stream, .v5) == Self.packets)
        for cut in 1..<stream.count {
            var decoder = MQTTStreamDecoder(version: .v5, maximumPacketSize: 1 << 20)
            let first = try decoder.append(Array(stream[..<cut]))
            let rest = try decoder.append(Array(stream[cut...]))
            #expect(first + rest == Self.packets, "cut at \(cut)")
            #expect(decoder.pendingByteCount == 0)
        }
        var decoder = MQTTStreamDecoder(version: .v5, maximumPacketSize: 1 << 20)
        var decoded: [MQTTPacket] = []
        for byte in stream { decoded += try decoder.append([byte]) }
        #expect(decoded == Self.packets, "one byte at a time")
    }

    /// Each input with a part of the error its decoder must give (nil: an incomplete packet,
    /// which waits for more).
    @Test("what is not MQTT is a typed error that says what is wrong, never a crash or a wait", arguments: [
        ("F000", "packet type 15, which Tether does not speak"), ("5002000a", "packet type 5, which Tether does not speak"),
        ("3600000174", "a PUBLISH at QoS 3"), ("20", nil), ("2003000000", "1 bytes after a type 2 packet"),
        ("200100", "a packet shorter than its fields"), ("30ffffffff7f", "a remaining length longer than 4 bytes"),
        ("308000", "a remaining length not in its shortest encoding"), ("3203000174", "a packet shorter than its fields"), ("3a05000174", nil),
        ("300400020000", "a string that is not valid UTF-8"), ("300300fffe", "a field longer than its packet"),
        ("62020001", "packet type 6"), ("8203000174", "a packet shorter than its fields"), ("900200ff", "a SUBACK without a return code"),
        ("3205000174 0000", "a PUBLISH with packet id 0"),
    ] as [(String, String?)])
    func malformed(_ input: (String, String?)) {
        let bytes = Self.hex(input.0.replacingOccurrences(of: " ", with: ""))
        var decoder = MQTTStreamDecoder(version: .v3_1_1, maximumPacketSize: 1 << 20)
        do {
            let packets = try decoder.append(bytes)
            // Only an incomplete packet may decode to nothing: then it waits for more.
            #expect(input.1 == nil && packets.isEmpty, "decoded \(packets) from \(input.0)")
        } catch {
            // `append` throws only `MQTTDecodingError` (typed throws).
            guard let expected = input.1 else {
                Issue.record("\(input.0): an incomplete packet must wait for more, not fail: \(error)")
                return
            }
            #expect(error.description.contains(expected), "\(input.0): \(error)")
        }
    }

    @Test("a packet above the maximum is refused from its header, before its body arrives")
    func maximumSize() {
        var decoder = MQTTStreamDecoder(version: .v3_1_1, maximumPacketSize: 1024)
        #expect(throws: MQTTDecodingError.self) { try decoder.append([0x30, 0x80, 0x80, 0x01]) }
    }

    @Test("topic filters: validity and matching (MQTT §4.7)")
    func topicFilters() {
        for valid in ["#", "+", "a/+/b", "a/#", "/", "+/+", "a//b"] { #expect(MQTTTopicFilter.isValid(filter: valid), "\(valid)") }
        for invalid in ["", "a#", "a/#/b", "a+/b", "#/a"] { #expect(!MQTTTopicFilter.isValid(filter: invalid), "\(invalid)") }
        #expect(MQTTTopicFilter.isValid(topic: "a/b") && !MQTTTopicFilter.isValid(topic: "a/+") && !MQTTTopicFilter.isValid(topic: ""))
        let table: [(String, String, Bool)] = [
            ("a/b", "a/b", true), ("a/b", "a/c", false), ("a/+", "a/b", true), ("a/+", "a/b/c", false), ("a/#", "a", true),
            ("a/#", "a/b/c", true), ("#", "a/b", true), ("+/b", "a/b", true), ("+", "/a", false), ("#", "$SYS/x", false),
            ("$SYS/#", "$SYS/x", true), ("+/+", "/a", true), ("a/+/c", "a//c", true),
        ]
        for (filter, topic, expected) in table { #expect(MQTTTopicFilter.matches(filter, topic: topic) == expected, "\(filter) vs \(topic)") }
    }
}

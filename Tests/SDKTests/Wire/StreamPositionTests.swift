import Foundation
@testable import SDK
import Testing

/// A stream position: opaque to the app, Codable in a stable format, ordered only where its
/// protocol numbers it.
@Suite("StreamPosition: an opaque, Codable cursor")
struct StreamPositionTests {
    private func json(_ position: StreamPosition) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(position), as: UTF8.self)
    }

    private func decode(_ text: String) throws -> StreamPosition {
        try JSONDecoder().decode(StreamPosition.self, from: Data(text.utf8))
    }

    @Test("the encoding is stable, and every kind decodes back to itself")
    func roundTrip() throws {
        let table: [(StreamPosition, String)] = [
            (.sequence(42), #"{"kind":"sequence","ordinal":42}"#),
            (.timestamp(milliseconds: 1_800_000_005_000), #"{"kind":"timestamp-ms","ordinal":1800000005000}"#),
            (.opaque("c-9"), #"{"kind":"opaque","token":"c-9"}"#),
            (StreamPosition(kind: "kafka-offset", ordinal: UInt64.max), #"{"kind":"kafka-offset","ordinal":18446744073709551615}"#),
        ]
        for (position, expected) in table {
            #expect(try json(position) == expected)
            #expect(try decode(expected) == position)
        }
    }

    @Test("what does not decode: no kind, an empty kind, both an ordinal and a token, neither, a negative ordinal")
    func malformed() {
        for text in [#"{"ordinal":1}"#, #"{"kind":"","ordinal":1}"#, #"{"kind":"x","ordinal":1,"token":"a"}"#, #"{"kind":"x"}"#, #"{"kind":"x","ordinal":-1}"#] {
            #expect(throws: DecodingError.self, "\(text)") { try decode(text) }
        }
    }

    @Test("ordered within one numbered kind; tokens and two kinds do not compare")
    func ordering() {
        #expect(StreamPosition.sequence(5).isAtOrPast(.sequence(5)) == true)
        #expect(StreamPosition.sequence(4).isAtOrPast(.sequence(5)) == false)
        #expect(StreamPosition.timestamp(milliseconds: 10).isAtOrPast(.timestamp(milliseconds: 9)) == true)
        #expect(StreamPosition.sequence(10).isAtOrPast(.timestamp(milliseconds: 9)) == nil)
        #expect(StreamPosition.opaque("b").isAtOrPast(.opaque("a")) == nil)
    }

    @Test("what the app reads: the sequence only of a sequence; a description for logs")
    func publicReads() {
        #expect(StreamPosition.sequence(7).sequence == 7)
        #expect(StreamPosition.timestamp(milliseconds: 7).sequence == nil)
        #expect(StreamPosition.opaque("7").sequence == nil)
        #expect(StreamPosition.timestamp(milliseconds: -5).milliseconds == 0, "before 1970 is 1970")
        #expect(StreamPosition.sequence(7).description == "sequence 7")
        #expect(StreamPosition.opaque("c-9").description == "opaque c-9")
        #expect(ChannelMessage(channel: "room", sequence: 3, data: 1).position == .sequence(3))
        #expect(PublishReceipt(.acknowledged, position: .opaque("x")).description == "acknowledged at opaque x")
    }
}

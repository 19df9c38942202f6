@testable import SDK
import Testing

/// A server's `message` in its canonical text is read without building its envelope; everything
/// else goes through the parser. Both must give the same answer for every text.
@Suite("JSONWireCodec: a canonical message read directly")
struct CanonicalMessageTests {
    static let messages = [
        ChannelMessage(channel: "room", sequence: 0, data: ["text": "hi", "n": 1]),
        ChannelMessage(channel: "чат/😀", sequence: UInt64.max, data: [1, [true, .null], "é\u{1}\"\\"]),
        ChannelMessage(channel: "a", sequence: 7, data: "plain"),
        ChannelMessage(channel: "deep", sequence: 42, data: ["a": ["b": ["c": 1.5]]]),
    ]

    @Test("what a server's codec writes is read directly, as what it was", arguments: messages)
    func readsCanonical(message: ChannelMessage) throws {
        guard case .text(let text) = try JSONWireCodec().encode(ServerMessage.message(message)) else { Issue.record("not text"); return }
        #expect(CanonicalMessage.parse(text, maxDepth: 32) == message, "\(text)")
        #expect(try JSONWireCodec().decode(.text(text)) == .message(message))
    }

    @Test("texts the canonical form does not cover are left to the parser", arguments: [
        #"{"channel":"r","data":1,"seq":1,"type":"message" }"#, #"{ "channel":"r","data":1,"seq":1,"type":"message"}"#,
        #"{"data":1,"channel":"r","seq":1,"type":"message"}"#, #"{"channel":"r","data":1,"seq":01,"type":"message"}"#,
        #"{"channel":"r","data":1,"seq":18446744073709551616,"type":"message"}"#, #"{"channel":"r","data":1,"seq":1.0,"type":"message"}"#,
        #"{"channel":"r\u0041","data":1,"seq":1,"type":"message"}"#, #"{"channel":"","data":1,"seq":1,"type":"message"}"#,
        #"{"channel":"r","data": 1,"seq":1,"type":"message"}"#, #"{"channel":"r","data":1,"seq":1,"type":"message"}x"#,
        #"{"channel":"r","data":[1,"seq":1,"type":"message"}"#, #"{"channel":"r","data":1,"seq":1,"type":"message","x":2}"#,
        #"{"channel":"r","data":1,"seq":1,"type":"ok"}"#, #"{"channel":"r","seq":1,"type":"message"}"#,
    ])
    func leavesOthers(text: String) {
        #expect(CanonicalMessage.parse(text, maxDepth: 32) == nil)
    }

    @Test("data as deep as the codec allows is read directly; one level more is the parser's refusal, the same")
    func depthLimit() throws {
        let codec = JSONWireCodec(maxDepth: 3)
        let fits = #"{"channel":"r","data":{"a":1},"seq":1,"type":"message"}"#
        #expect(CanonicalMessage.parse(fits, maxDepth: 3) != nil)
        let tooDeep = #"{"channel":"r","data":{"a":[1]},"seq":1,"type":"message"}"#
        #expect(CanonicalMessage.parse(tooDeep, maxDepth: 3) == nil)
        expectSameAnswer(
            tooDeep, direct: Result { () throws(CodecError) in try codec.decode(.text(tooDeep)) },
            parser: Result { () throws(CodecError) in try codec.decodeThroughParser(.text(tooDeep)) })
    }

    static let shapes = [
        ChannelMessage(channel: "r", sequence: 0, data: 1), ChannelMessage(channel: "ab", sequence: 10, data: ["k": [true]]),
        ChannelMessage(channel: "c", sequence: UInt64.max, data: "s"),
    ]

    @Test("one edit away from canonical: the same answer as the parser's, under any limits")
    func agreesWithParser() async throws {
        let codecs = [JSONWireCodec(), JSONWireCodec(maxFrameBytes: 40), JSONWireCodec(maxDepth: 2), JSONWireCodec(maxDepth: 3), JSONWireCodec(maxDepth: 0)]
        let canonical = try Self.shapes.map { message in
            guard case .text(let text) = try JSONWireCodec().encode(ServerMessage.message(message)) else { throw CodecError(.unsupportedFrame, "not text") }
            return text
        }
        let texts = textsOneEditAway(from: canonical, alphabet: #" 019,:}{]["\-.etrunlmsagyqcdhk"#)
        let direct = await serverTextsAgreeWithParser(texts, codecs: codecs) { CanonicalMessage.parse($0, maxDepth: 32) != nil }
        // The edits that keep the form (a digit, a letter of the channel or of a string) are read directly.
        #expect(direct > Self.shapes.count)
    }
}

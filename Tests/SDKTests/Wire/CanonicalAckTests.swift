@testable import SDK
import Testing

/// A server's `ok` in its canonical text is read without the parser; everything else goes
/// through it. Both must give the same answer for every text.
@Suite("JSONWireCodec: a canonical ok read directly")
struct CanonicalAckTests {
    static let acks = [
        Ack(id: 0), Ack(id: 7), Ack(id: 1, sequence: 0), Ack(id: 42, sequence: 41, gap: true), Ack(id: 9, sequence: 3, gap: false),
        Ack(id: UInt64.max, sequence: UInt64.max, gap: true), Ack(id: 10, gap: true),
    ]

    @Test("what a server's codec writes is read directly, as what it was", arguments: acks)
    func readsCanonical(ack: Ack) throws {
        guard case .text(let text) = try JSONWireCodec().encode(ServerMessage.ack(ack)) else { Issue.record("not text"); return }
        #expect(CanonicalAck.parse(text) == ack, "\(text)")
        #expect(try JSONWireCodec().decode(.text(text)) == .ack(ack))
    }

    @Test("texts the canonical form does not cover are left to the parser", arguments: [
        #"{"id":1,"type":"ok" }"#, #"{ "id":1,"type":"ok"}"#, #"{"type":"ok","id":1}"#, #"{"id":01,"type":"ok"}"#,
        #"{"id":18446744073709551616,"type":"ok"}"#, #"{"id":1.0,"type":"ok"}"#, #"{"id":1e2,"type":"ok"}"#, #"{"id":-1,"type":"ok"}"#,
        #"{"id":1,"seq":null,"type":"ok"}"#, #"{"gap":1,"id":1,"type":"ok"}"#, #"{"id":1,"type":"ok","x":2}"#, #"{"id":1,"type":"ok"}x"#,
        #"{"id":1,"type":"pong"}"#, #"{"id":,"type":"ok"}"#, #"{"id":1,"type":"ok""#, #"{"gap":true,"gap":false,"id":1,"type":"ok"}"#,
    ])
    func leavesOthers(text: String) {
        #expect(CanonicalAck.parse(text) == nil)
    }

    /// Every text one edit away from a canonical `ok` (a byte deleted, inserted or replaced),
    /// under the default limits and tight ones: the same message or the same refusal.
    /// One of each shape the server writes (with and without `seq` and `gap`, the smallest and
    /// largest numbers): the texts one edit away from them.
    static let shapes = [Ack(id: 0), Ack(id: 1, sequence: 0), Ack(id: 10, gap: true), Ack(id: UInt64.max, sequence: UInt64.max, gap: true)]

    @Test("one edit away from canonical: the same answer as the parser's, under any limits")
    func agreesWithParser() async throws {
        let codecs = [JSONWireCodec(), JSONWireCodec(maxFrameBytes: 16), JSONWireCodec(maxFrameBytes: 30, maxDepth: 1), JSONWireCodec(maxDepth: 2), JSONWireCodec(maxDepth: 0)]
        let canonical = try Self.shapes.map { ack in
            guard case .text(let text) = try JSONWireCodec().encode(ServerMessage.ack(ack)) else { throw CodecError(.unsupportedFrame, "not text") }
            return text
        }
        let texts = textsOneEditAway(from: canonical, alphabet: #" 019,:}{"-.eEntrugapidsqy"#)
        let direct = await serverTextsAgreeWithParser(texts, codecs: codecs) { CanonicalAck.parse($0) != nil }
        // The edits that keep the form (a digit of a number, true for false) are read directly.
        #expect(direct > Self.shapes.count)
    }
}

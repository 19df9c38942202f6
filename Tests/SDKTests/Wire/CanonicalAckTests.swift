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

    // Tens of thousands of decodes: it gives way after each text, so that it never holds one of
    // the test runner's threads for seconds (under ASan that starved the suites beside it,
    // whose servers' timers then fired first).
    @Test("one edit away from canonical: the same answer as the parser's, under any limits")
    func agreesWithParser() async throws {
        let codecs = [JSONWireCodec(), JSONWireCodec(maxFrameBytes: 16), JSONWireCodec(maxFrameBytes: 30, maxDepth: 1), JSONWireCodec(maxDepth: 2), JSONWireCodec(maxDepth: 0)]
        let alphabet = Array(#" 019,:}{"-.eEntrugapidsqy"#.utf8)
        var texts: Set<String> = []
        for ack in Self.shapes {
            guard case .text(let text) = try JSONWireCodec().encode(ServerMessage.ack(ack)) else { continue }
            let bytes = Array(text.utf8)
            texts.insert(text)
            for index in bytes.indices {
                var deleted = bytes
                deleted.remove(at: index)
                texts.insert(String(decoding: deleted, as: UTF8.self))
                for byte in alphabet {
                    var inserted = bytes
                    inserted.insert(byte, at: index)
                    texts.insert(String(decoding: inserted, as: UTF8.self))
                    var replaced = bytes
                    replaced[index] = byte
                    texts.insert(String(decoding: replaced, as: UTF8.self))
                }
            }
        }
        var direct = 0
        for text in texts {
            await Task.yield()
            if CanonicalAck.parse(text) != nil { direct += 1 }
            for codec in codecs {
                let fast = Result { () throws(CodecError) in try codec.decode(.text(text)) }
                let parsed = Result { () throws(CodecError) in try codec.decodeThroughParser(.text(text)) }
                switch (fast, parsed) {
                case (.success(let a), .success(let b)): #expect(a == b, "\(text)")
                case (.failure(let a), .failure(let b)): #expect(a.code == b.code, "\(text)")
                default: Issue.record("\(text): \(fast) but the parser: \(parsed)")
                }
            }
        }
        // The edits that keep the form (a digit of a number, true for false) are read directly.
        #expect(direct > Self.shapes.count)
    }
}

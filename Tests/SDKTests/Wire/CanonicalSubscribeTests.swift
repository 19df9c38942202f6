@testable import SDK
import Testing

/// A client's `subscribe` in its canonical text is read without the parser; everything else
/// goes through it. Both must give the same answer for every text.
@Suite("JSONWireCodec: a canonical subscribe read directly")
struct CanonicalSubscribeTests {
    static let subscribes: [ClientMessage] = [
        .subscribe(id: 0, channel: "a", since: nil), .subscribe(id: 7, channel: "room-7", since: 0),
        .subscribe(id: UInt64.max, channel: "chat é 日本", since: UInt64.max), .subscribe(id: 12, channel: String(repeating: "x", count: 256), since: 41),
    ]

    @Test("what a client's codec writes is read directly, as what it was", arguments: subscribes)
    func readsCanonical(message: ClientMessage) throws {
        guard case .text(let text) = try JSONWireCodec().encode(message), case .subscribe(let id, let channel, let since) = message else {
            Issue.record("not a text subscribe")
            return
        }
        let read = try #require(CanonicalSubscribe.parse(text), "\(text)")
        #expect(read.id == id && read.channel == channel && read.since == since)
        #expect(try JSONWireCodec().decodeClientMessage(.text(text)) == message)
    }

    @Test("texts the canonical form does not cover are left to the parser", arguments: [
        #"{"channel":"a","id":1,"type":"subscribe" }"#, #"{"id":1,"channel":"a","type":"subscribe"}"#, #"{"channel":"a\"b","id":1,"type":"subscribe"}"#,
        #"{"channel":"a\u0062","id":1,"type":"subscribe"}"#, "{\"channel\":\"a\u{01}\",\"id\":1,\"type\":\"subscribe\"}", #"{"channel":"a","id":01,"type":"subscribe"}"#,
        #"{"channel":"a","id":1,"since":null,"type":"subscribe"}"#, #"{"channel":"a","id":1,"since":-1,"type":"subscribe"}"#,
        #"{"channel":"a","id":1,"type":"subscribe","x":2}"#, #"{"channel":"a","id":1,"type":"unsubscribe"}"#, #"{"channel":1,"id":1,"type":"subscribe"}"#,
        #"{"channel":"a","id":1,"type":"subscribe"}x"#, #"{"channel":"a,"id":1,"type":"subscribe"}"#,
    ])
    func leavesOthers(text: String) {
        #expect(CanonicalSubscribe.parse(text) == nil)
    }

    /// One of each shape a client writes (with and without `since`, the smallest and largest
    /// numbers, an empty name, a name that needs escaping): the texts one edit away from them.
    static let shapes: [ClientMessage] = [
        .subscribe(id: 0, channel: "a", since: nil), .subscribe(id: 1, channel: "r", since: 0),
        .subscribe(id: UInt64.max, channel: "é", since: UInt64.max), .subscribe(id: 3, channel: "q\"", since: 2),
    ]

    // Tens of thousands of decodes: it gives way after each text (see CanonicalAckTests).
    @Test("one edit away from canonical: the same answer as the parser's, under any limits")
    func agreesWithParser() async throws {
        let codecs = [JSONWireCodec(), JSONWireCodec(maxFrameBytes: 30), JSONWireCodec(maxFrameBytes: 40, maxDepth: 1), JSONWireCodec(maxDepth: 2), JSONWireCodec(maxDepth: 0)]
        let canonical = try Self.shapes.map { message in
            guard case .text(let text) = try JSONWireCodec().encode(message) else { throw CodecError(.unsupportedFrame, "not text") }
            return text
        }
        var texts = textsOneEditAway(from: canonical, alphabet: " 019,:}{\"-.eEnbcstrhilpuy\\\u{01}")
        // An empty name is canonical too, and the codec refuses it as the parser's path does.
        texts.insert(#"{"channel":"","id":1,"type":"subscribe"}"#)
        var direct = 0
        for text in texts {
            await Task.yield()
            if CanonicalSubscribe.parse(text) != nil { direct += 1 }
            for codec in codecs {
                expectSameAnswer(
                    text,
                    direct: Result { () throws(CodecError) in try codec.decodeClientMessage(.text(text)) },
                    parser: Result { () throws(CodecError) in try codec.decodeClientMessageThroughParser(.text(text)) }
                )
            }
        }
        // The edits that keep the form (a digit of a number, a letter of the name) are read directly.
        #expect(direct > Self.shapes.count)
    }
}

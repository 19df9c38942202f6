@testable import SDK
import Testing

/// The envelope-only messages (a client's auth, subscribe, unsubscribe and ping; a server's ok
/// and pong) are written directly, not through a ``JSONValue``: the
/// text must be the very text the generic writer makes (members in sorted order, the same
/// escapes), and the same limits must hold.
@Suite("JSONWireCodec: envelopes written directly")
struct JSONWireCodecEnvelopeTests {
    let codec = JSONWireCodec()

    /// What the generic path writes for the same members.
    func generic(_ members: [String: JSONValue]) throws -> String {
        try JSONWriter.checkedText(.object(members), maxDepth: 64)
    }

    static let channels = ["room", "hé 👋", "a\"quote", "back\\slash", "tab\tnew\nline", "\u{01}control", String(repeating: "x", count: 256)]

    @Test("subscribe and unsubscribe: the generic writer's text", arguments: channels)
    func subscribe(channel: String) throws {
        #expect(try codec.encode(.subscribe(id: 7, channel: channel, since: nil)) == .text(generic(["channel": .string(channel), "id": 7, "type": "subscribe"])))
        #expect(
            try codec.encode(.subscribe(id: UInt64.max, channel: channel, since: 0))
                == .text(generic(["channel": .string(channel), "id": JSONValue(UInt64.max), "since": 0, "type": "subscribe"]))
        )
        #expect(try codec.encode(.unsubscribe(id: 8, channel: channel)) == .text(generic(["channel": .string(channel), "id": 8, "type": "unsubscribe"])))
    }

    @Test("auth with and without a token, and ping: the generic writer's text")
    func authAndPing() throws {
        #expect(try codec.encode(.authenticate(id: 1, token: Secret("t\"ok\\en"))) == .text(generic(["id": 1, "token": "t\"ok\\en", "type": "auth"])))
        #expect(try codec.encode(.authenticate(id: 2, token: nil)) == .text(generic(["id": 2, "type": "auth"])))
        #expect(try codec.encode(.ping(id: 3)) == .text(generic(["id": 3, "type": "ping"])))
    }

    @Test("a server's ok and pong: the generic writer's text")
    func serverEnvelopes() throws {
        #expect(try codec.encode(ServerMessage.ack(Ack(id: 4))) == .text(generic(["id": 4, "type": "ok"])))
        #expect(try codec.encode(ServerMessage.ack(Ack(id: 5, sequence: 0))) == .text(generic(["id": 5, "seq": 0, "type": "ok"])))
        #expect(
            try codec.encode(ServerMessage.ack(Ack(id: UInt64.max, sequence: UInt64.max, gap: true)))
                == .text(generic(["gap": true, "id": JSONValue(UInt64.max), "seq": JSONValue(UInt64.max), "type": "ok"]))
        )
        #expect(try codec.encode(ServerMessage.pong(id: 6)) == .text(generic(["id": 6, "type": "pong"])))
    }

    @Test("the limits hold: no channel name, one over 256 bytes, a frame over the size limit")
    func limits() {
        #expect(throws: CodecError.self) { try codec.encode(.subscribe(id: 1, channel: "", since: nil)) }
        #expect(throws: CodecError.self) { try codec.encode(.unsubscribe(id: 1, channel: String(repeating: "x", count: 257))) }
        let small = JSONWireCodec(maxFrameBytes: 64)
        #expect(throws: CodecError.self) { try small.encode(.authenticate(id: 1, token: Secret(String(repeating: "t", count: 100)))) }
    }
}

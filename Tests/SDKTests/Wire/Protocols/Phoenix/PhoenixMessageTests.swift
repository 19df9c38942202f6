@testable import SDK
import Testing

/// Phoenix's V2 serializer, frame by frame from the frames a real Phoenix 1.7.24 server (Bandit
/// 1.11.1) sent and took: `../shared/research/phoenix-transcripts.md` §6 (the first two runs) and
/// §3 (the binary layouts).
@Suite("Phoenix V2 serializer")
struct PhoenixMessageTests {
    static func bytes(_ hex: String) -> [UInt8] { [UInt8](hex: hex) }

    @Test(
        "the server's text frames decode as the transcript shows them",
        arguments: [
            (#"[null,"1","phoenix","phx_reply",{"response":{},"status":"ok"}]"#,
             PhoenixMessage(joinRef: nil, ref: "1", topic: "phoenix", event: "phx_reply", payload: .json(["response": [:], "status": "ok"]))),
            (#"["2","2","room:lobby","phx_reply",{"response":{"topic":"room:lobby","user":"alice"},"status":"ok"}]"#,
             PhoenixMessage(joinRef: "2", ref: "2", topic: "room:lobby", event: "phx_reply", payload: .json(["response": ["topic": "room:lobby", "user": "alice"], "status": "ok"]))),
            (#"[null,null,"room:lobby","new_msg",{"body":"hello","id":1,"user":"alice"}]"#,
             PhoenixMessage(joinRef: nil, ref: nil, topic: "room:lobby", event: "new_msg", payload: .json(["body": "hello", "id": 1, "user": "alice"]))),
            (#"["2",null,"room:lobby","presence_state",{}]"#,
             PhoenixMessage(joinRef: "2", ref: nil, topic: "room:lobby", event: "presence_state", payload: .json([:]))),
            (#"["7","7","room:2","phx_error",{}]"#,
             PhoenixMessage(joinRef: "7", ref: "7", topic: "room:2", event: "phx_error", payload: .json([:]))),
            (#"[null,"5","room:lobby","phx_reply",{"response":{"reason":"unmatched topic"},"status":"error"}]"#,
             PhoenixMessage(joinRef: nil, ref: "5", topic: "room:lobby", event: "phx_reply", payload: .json(["response": ["reason": "unmatched topic"], "status": "error"]))),
            // "A numeric ref is echoed back as a number."
            (#"[null,12,"phoenix","phx_reply",{"response":{},"status":"ok"}]"#,
             PhoenixMessage(joinRef: nil, ref: "12", topic: "phoenix", event: "phx_reply", payload: .json(["response": [:], "status": "ok"]))),
        ]
    )
    func decodesText(frame: String, expected: PhoenixMessage) throws {
        #expect(try PhoenixMessage.decode(.text(frame)) == expected)
    }

    @Test("binary frames: the server's reply (kind 1) and broadcast (kind 2), the client's push (kind 0)")
    func decodesBinary() throws {
        // carol's binary echo and bin_broadcast (§6).
        #expect(try PhoenixMessage.decode(.binary(Self.bytes("0101020602373131726f6f6d3a326f6b000102ff")))
            == PhoenixMessage(joinRef: "7", ref: "11", topic: "room:2", event: "phx_reply", payload: .binaryReply(status: "ok", response: [0, 1, 2, 0xff])))
        #expect(try PhoenixMessage.decode(.binary(Self.bytes("02060d726f6f6d3a3262696e5f62726f616463617374000102ff")))
            == PhoenixMessage(joinRef: nil, ref: nil, topic: "room:2", event: "bin_broadcast", payload: .binary([0, 1, 2, 0xff])))
        let push = PhoenixMessage(joinRef: "7", ref: "11", topic: "room:2", event: "echo", payload: .binary([0, 1, 2, 0xff]))
        #expect(try PhoenixMessage.decode(.binary(Self.bytes("0001020604373131726f6f6d3a326563686f000102ff")), from: .client) == push)
        #expect(try push.encoded() == .binary(Self.bytes("0001020604373131726f6f6d3a326563686f000102ff")), "the client's push, byte for byte as sent")
    }

    @Test("a binary push from the server has no ref (Phoenix's and Supabase's V2 serializers; phoenix.js decodePush)")
    func serverPush() throws {
        // <<0, join_ref_size, topic_size, event_size, join_ref, topic, event, data>>
        #expect(try PhoenixMessage.decode(.binary([0, 1, 6, 4] + Array("7room:2echo".utf8) + [0, 1]))
            == PhoenixMessage(joinRef: "7", ref: nil, topic: "room:2", event: "echo", payload: .binary([0, 1])))
    }

    @Test("Supabase's user broadcast (kind 4: supabase/realtime lib/realtime_web/socket/v2_serializer.ex) reads as the JSON broadcast")
    func supabaseUserBroadcast() throws {
        let meta = #"{"id":"m1"}"#
        func frame(_ encoding: UInt8, _ payload: [UInt8]) -> TransportFrame {
            .binary([4, 15, 6, UInt8(meta.utf8.count), encoding] + Array("realtime:room-1cursor".utf8) + Array(meta.utf8) + payload)
        }
        #expect(try PhoenixMessage.decode(frame(1, Array(#"{"x":1}"#.utf8)))
            == PhoenixMessage(joinRef: nil, ref: nil, topic: "realtime:room-1", event: "broadcast",
                              payload: .json(["type": "broadcast", "event": "cursor", "payload": ["x": 1], "meta": ["id": "m1"]])))
        #expect(try PhoenixMessage.decode(frame(0, [0xff, 0]))
            == PhoenixMessage(joinRef: nil, ref: nil, topic: "realtime:room-1", event: "broadcast",
                              payload: .json(["type": "broadcast", "event": "cursor", "payload": ["binary": "/wA="], "meta": ["id": "m1"]])))
        #expect(throws: PhoenixFrameError.self) { try PhoenixMessage.decode(frame(1, Array("not json".utf8))) }
        #expect(throws: PhoenixFrameError.self, "kind 3 is the client's") { try PhoenixMessage.decode(.binary([3, 0, 0, 0, 0, 0, 0])) }
    }

    @Test("the client's text frames encode as the transcript shows them")
    func encodesText() throws {
        #expect(try PhoenixMessage(joinRef: nil, ref: "1", topic: "phoenix", event: "heartbeat", payload: .json([:])).encoded()
            == .text(#"[null,"1","phoenix","heartbeat",{}]"#))
        #expect(try PhoenixMessage(joinRef: "1", ref: "1", topic: "room:lobby", event: "phx_join", payload: .json(["hello": "from bob"])).encoded()
            == .text(#"["1","1","room:lobby","phx_join",{"hello":"from bob"}]"#))
        #expect(try PhoenixMessage(joinRef: "2", ref: "4", topic: "room:lobby", event: "phx_leave", payload: .json([:])).encoded()
            == .text(#"["2","4","room:lobby","phx_leave",{}]"#))
    }

    @Test(
        "what is not a V2 message is a typed error naming why",
        arguments: [
            (TransportFrame.text("not json"), "not JSON"),
            (.text(#"{"topic":"t","event":"e","payload":{},"ref":null}"#), "not a V2 message"),
            (.text(#"[null,null,"t","e"]"#), "not a V2 message"),
            (.text(#"[null,null,7,"e",{}]"#), "must be strings"),
            (.text(#"[true,null,"t","e",{}]"#), "join_ref"),
            (.binary([]), "unknown kind"),
            (.binary([9, 0]), "unknown kind 9"),
            (.binary([2, 6]), "cut short in its header"),
            (.binary([2, 6, 1, 0x72]), "cut short in its fields"),
            (.binary([2, 1, 1, 0xff, 0x65]), "not UTF-8"),
        ]
    )
    func refuses(frame: TransportFrame, reason: String) {
        do {
            _ = try PhoenixMessage.decode(frame)
            Issue.record("decoded \(frame)")
        } catch {
            #expect(error.description.contains(reason), "\(error)")
        }
    }

    @Test("a binary push whose topic is longer than a byte can count, or a reply, is not sent")
    func refusesToEncode() {
        let long = String(repeating: "t", count: 256)
        #expect(throws: PhoenixFrameError.self) { try PhoenixMessage(joinRef: nil, ref: "1", topic: long, event: "e", payload: .binary([])).encoded() }
        #expect(throws: PhoenixFrameError.self) { try PhoenixMessage(joinRef: nil, ref: "1", topic: "t", event: "e", payload: .binaryReply(status: "ok", response: [])).encoded() }
    }
}

import SDK
import Testing

@Suite("JSONWireCodec")
struct JSONWireCodecTests {
    let codec = JSONWireCodec()

    @Test(
        "client messages survive a round trip",
        arguments: [
            ClientMessage.authenticate(id: 1, token: Secret("t")),
            .authenticate(id: 2, token: nil),
            .subscribe(id: 3, channel: "room", since: nil),
            .subscribe(id: 4, channel: "room", since: 17),
            .unsubscribe(id: 5, channel: "room"),
            .publish(id: 6, channel: "room", data: ["text": "hé \"quoted\"\n", "n": 3.5, "list": [true, nil, 1]]),
            .ping(id: 7),
        ]
    )
    func clientRoundTrip(message: ClientMessage) throws {
        #expect(try codec.decodeClientMessage(codec.encode(message)) == message)
    }

    @Test(
        "server messages survive a round trip",
        arguments: [
            ServerMessage.ack(Ack(id: 1)),
            .ack(Ack(id: 2, sequence: 10, gap: true)),
            .message(ChannelMessage(channel: "c", sequence: 5, data: ["emoji": "👋", "nested": ["a": [1, 2]]])),
            .error(ServerError(id: 3, code: "unauthorized", message: "no")),
            .error(ServerError(id: nil, code: "bad_request", message: "what")),
            .pong(id: 9),
        ]
    )
    func serverRoundTrip(message: ServerMessage) throws {
        let frame = try codec.encode(message)
        #expect(try codec.decode(frame) == message)
    }

    @Test(
        "malformed, unknown and oversize frames are typed errors",
        arguments: [
            (TransportFrame.text(""), CodecError.Code.malformed),
            (.text("{"), .malformed),
            (.text("[1,2]"), .malformed),
            (.text("{\"type\":\"ok\"}"), .missingField),
            (.text("{\"type\":\"ok\",\"id\":-1}"), .missingField),
            (.text("{\"type\":\"ok\",\"id\":1.5}"), .missingField),
            (.text("{\"type\":\"message\",\"channel\":\"c\",\"seq\":1}"), .missingField),
            (.text("{\"type\":\"nope\",\"id\":1}"), .unknownType),
            (.text("{\"type\":7}"), .missingField),
            (.text("{\"type\":\"pong\",\"id\":1} trailing"), .malformed),
            (.text("{\"type\":\"pong\",\"id\":1e999}"), .malformed),
            (.text("{\"a\":\"\\ud800\"}"), .malformed),
            (.text(String(repeating: "[", count: 100)), .tooDeep),
            (.binary([0x7B, 0x7D]), .unsupportedFrame),
            (.text("{\"type\":\"pong\",\"id\":1,\"pad\":\"" + String(repeating: "x", count: 2_000_000) + "\"}"), .oversize),
        ]
    )
    func rejects(frame: TransportFrame, code: CodecError.Code) {
        do {
            _ = try codec.decode(frame)
            Issue.record("decoded a bad frame")
        } catch {
            #expect(error.code == code, "\(error)")
        }
    }

    @Test("a message too large to send is an encoding error, not a crash")
    func oversizeEncode() {
        let small = JSONWireCodec(maxFrameBytes: 64)
        #expect(throws: CodecError.self) { try small.encode(ClientMessage.publish(id: 1, channel: "c", data: .string(String(repeating: "x", count: 100)))) }
    }

    @Test("the token is on the wire but never in a description")
    func tokenRedacted() throws {
        let message = ClientMessage.authenticate(id: 1, token: Secret("hunter2"))
        guard case .text(let text) = try codec.encode(message) else { throw CodecError(.unsupportedFrame, "") }
        #expect(text.contains("hunter2"))
        #expect(!message.description.contains("hunter2"))
        #expect(!String(reflecting: message).contains("hunter2"))
        #expect(!String(describing: Secret("hunter2")).contains("hunter2"))
    }

    @Test("unicode escapes and surrogate pairs decode")
    func unicode() throws {
        let frame = TransportFrame.text(#"{"type":"message","channel":"c","seq":1,"data":"\u00e9\ud83d\udc4b\n"}"#)
        guard case .message(let message) = try codec.decode(frame) else { throw CodecError(.malformed, "") }
        #expect(message.data == "é👋\n")
    }
}

extension JSONWireCodecTests {
    @Test("channelMessage(in:) answers what decode answers for a message as servers write it, and nil for anything else (decode tells what)")
    func channelMessageAgreesWithDecode() throws {
        let codec = JSONWireCodec()
        let messages = [
            ChannelMessage(channel: "room", sequence: 7, data: ["text": "hi", "n": 1]),
            ChannelMessage(channel: "a/b c", sequence: 1, data: .null),
            ChannelMessage(channel: "room", sequence: UInt64.max, data: [1, 2, [3]]),
        ]
        for message in messages {
            let frame = try codec.encode(ServerMessage.message(message))
            #expect(codec.channelMessage(in: frame) == message)
            #expect(try codec.decode(frame) == .message(message))
        }
        for other in [ServerMessage.ack(Ack(id: 3, sequence: 4)), .pong(id: 2), .error(ServerError(id: 1, code: "denied", message: "no"))] {
            #expect(codec.channelMessage(in: try codec.encode(other)) == nil, "\(other)")
        }
        #expect(codec.channelMessage(in: .binary([0x7B])) == nil)
        #expect(codec.channelMessage(in: .text("{")) == nil)
    }
}

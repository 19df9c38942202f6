import ConnectionPolicy
import SDK
import Testing

/// Review item 9.2: whatever `encode` accepts, `decode` accepts and gives back unchanged —
/// for random messages of every kind, with random data (deep nesting, 64-bit integers,
/// doubles of every bit pattern, NaN, control characters, long channel names), under the
/// default limits and under tight ones. The generator is seeded: a failure prints its seed and
/// input, and reruns the same.
@Suite("Codec: encode accepts only what decode accepts")
struct CodecRoundTripPropertyTests {
    static let codecs = [JSONWireCodec(), JSONWireCodec(maxFrameBytes: 600, maxDepth: 6)]

    @Test("random client messages: encoded ⇒ decoded and equal", arguments: [UInt64(1), 2, 3, 4])
    func clientMessages(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        var checked = [0, 0]
        for round in 0..<1_500 {
            let message = random.clientMessage()
            for (index, codec) in Self.codecs.enumerated() {
                guard let frame = try? codec.encode(message) else { continue }
                let decoded = try #require(try? codec.decodeClientMessage(frame), "seed \(seed) round \(round): encoded but refused: \(frame)")
                #expect(decoded == message, "seed \(seed) round \(round)")
                checked[index] += 1
            }
        }
        // About 1,300 of the 1,500 encode under either codec's limits (measured): the property
        // says something only while most of them do.
        #expect(checked.allSatisfy { $0 >= 1_000 }, "messages that encoded, per codec: \(checked)")
    }

    @Test("random server messages: encoded ⇒ decoded and equal", arguments: [UInt64(5), 6, 7, 8])
    func serverMessages(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        var checked = [0, 0]
        for round in 0..<1_500 {
            let message = random.serverMessage()
            for (index, codec) in Self.codecs.enumerated() {
                guard let frame = try? codec.encode(message) else { continue }
                let decoded = try #require(try? codec.decode(frame), "seed \(seed) round \(round): encoded but refused: \(frame)")
                #expect(decoded == message, "seed \(seed) round \(round)")
                checked[index] += 1
            }
        }
        // About 1,300 of the 1,500 encode under either codec's limits (measured): the property
        // says something only while most of them do.
        #expect(checked.allSatisfy { $0 >= 1_000 }, "messages that encoded, per codec: \(checked)")
    }

    @Test("a publish nested 40 levels is refused by encode (tooDeep), and one at the limit goes")
    func depthAtTheLimit() throws {
        let codec = JSONWireCodec()
        func nested(_ levels: Int) -> JSONValue {
            (0..<levels).reduce(JSONValue.null) { inner, _ in .array([inner]) }
        }
        #expect(throws: CodecError(.tooDeep, "the message nests deeper than 32 levels")) {
            try codec.encode(ClientMessage.publish(id: 1, channel: "c", data: nested(40)))
        }
        // The message object is level 1, `data` level 2: 30 arrays put the innermost null at 32.
        let frame = try codec.encode(ClientMessage.publish(id: 1, channel: "c", data: nested(30)))
        #expect(throws: Never.self) { try codec.decodeClientMessage(frame) }
        #expect(throws: CodecError.self) { try codec.encode(ClientMessage.publish(id: 1, channel: "c", data: nested(31))) }
    }

    @Test("the id of a refused frame is still read when it is there")
    func idOfRefusedFrames() {
        let codec = JSONWireCodec()
        let deep = String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000)
        #expect(codec.requestID(inRefused: .text(#"{"type":"publish","id":7,"channel":"c","data":"# + deep + "}")) == 7)
        #expect(codec.requestID(inRefused: .text(#"{"data":{"a":[1,"]}"]},"id":8,"type":"nope"}"#)) == 8)
        #expect(codec.requestID(inRefused: .text(#"{"type":"subscribe","id":9,"channel":""}"#)) == 9)
        #expect(codec.requestID(inRefused: .text(#"{"type":"subscribe","channel":"c"}"#)) == nil)
        #expect(codec.requestID(inRefused: .text("not json")) == nil)
        #expect(codec.requestID(inRefused: .binary([0x7B])) == nil)
    }
}

/// Random protocol values from the seeded generator, so a failing input can be replayed.
extension SplitMix64 {
    mutating func chance(_ percent: UInt64) -> Bool { next() % 100 < percent }

    mutating func id() -> UInt64 {
        switch next() % 4 {
        case 0: UInt64.max - next() % 3
        case 1: 1 << 53 + next() % 5
        default: next() % 1000
        }
    }

    mutating func string(maxScalars: Int) -> String {
        let pool: [Unicode.Scalar] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\r", "\t", "\u{08}", "\u{0C}", "\u{01}", "\u{1F}", "\u{7F}", "é", "€", "👋", "\u{FFFF}", "\u{10FFFF}", "\u{2028}"]
        var text = String.UnicodeScalarView()
        for _ in 0..<Int(next() % UInt64(maxScalars + 1)) { text.append(pool[Int(next() % UInt64(pool.count))]) }
        return String(text)
    }

    mutating func channel() -> String {
        switch next() % 10 {
        case 0: ""
        case 1: String(repeating: "c", count: 250 + Int(next() % 10))
        case 2: String(repeating: "é", count: 127 + Int(next() % 3))
        default: string(maxScalars: 12)
        }
    }

    mutating func number() -> JSONValue {
        switch next() % 6 {
        case 0: JSONValue(Int64(bitPattern: next()))
        case 1: JSONValue(next())
        case 2: JSONValue(Double(bitPattern: next()))
        case 3: JSONValue([Double.nan, .infinity, -0.0, 0.1, 1e300, .leastNonzeroMagnitude, Double(Int64.max)][Int(next() % 7)])
        case 4: JSONValue(Int64(next() % 2000) - 1000)
        default: JSONValue(Double(Int64(next() % 100_000)) / 7)
        }
    }

    mutating func value(depth: Int) -> JSONValue {
        let kind = depth > 45 ? next() % 4 : next() % 7
        switch kind {
        case 0: return .null
        case 1: return .bool(chance(50))
        case 2: return number()
        case 3: return .string(string(maxScalars: 20))
        case 4:
            // Sometimes a long chain, to cross the depth limit.
            if chance(10) { return .array([value(depth: depth + 1)]) }
            return .array((0..<Int(next() % 4)).map { _ in value(depth: depth + 1) })
        default:
            if chance(15) { return .object([string(maxScalars: 3): value(depth: depth + 1)]) }
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int(next() % 4) { members[string(maxScalars: 6)] = value(depth: depth + 1) }
            return .object(members)
        }
    }

    mutating func clientMessage() -> ClientMessage {
        switch next() % 5 {
        case 0: .authenticate(id: id(), token: chance(20) ? nil : Secret(string(maxScalars: 10)))
        case 1: .subscribe(id: id(), channel: channel(), since: chance(40) ? nil : id())
        case 2: .unsubscribe(id: id(), channel: channel())
        case 3: .publish(id: id(), channel: channel(), data: value(depth: 2), key: chance(50) ? nil : (chance(10) ? string(maxScalars: 70) : string(maxScalars: 16)))
        default: .ping(id: id())
        }
    }

    mutating func serverMessage() -> ServerMessage {
        switch next() % 4 {
        case 0: .ack(Ack(id: id(), sequence: chance(50) ? nil : id(), gap: chance(30)))
        case 1: .message(ChannelMessage(channel: channel(), sequence: id(), data: value(depth: 2)))
        case 2: .error(ServerError(id: chance(30) ? nil : id(), code: string(maxScalars: 8), message: string(maxScalars: 30)))
        default: .pong(id: id())
        }
    }
}

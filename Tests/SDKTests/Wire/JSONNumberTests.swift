import SDK
import Testing

/// Review item 9.4: app data round-trips exactly — integers across the whole Int64 and UInt64
/// range, other numbers as sent.
@Suite("JSONNumber: numbers arrive as they were sent")
struct JSONNumberTests {
    let codec = JSONWireCodec()

    func roundTrip(_ text: String) throws -> JSONValue {
        let frame = TransportFrame.text(#"{"type":"message","channel":"c","seq":1,"data":"# + text + "}")
        guard case .message(let message) = try codec.decode(frame) else { throw CodecError(.malformed, "not a message") }
        // Through the server's side and back, as the reference server re-encodes it.
        guard case .message(let again) = try codec.decode(codec.encode(ServerMessage.message(message))) else { throw CodecError(.malformed, "") }
        return again.data
    }

    @Test(
        "integers and other numbers come out exactly as they went in",
        arguments: [
            "12345678901234567890", "18446744073709551615", "9223372036854775807", "-9223372036854775808",
            "9007199254740993", "-9007199254740993", "0", "-0", "1.5", "1.50", "0.1", "1e300", "-2.5E-7",
            "123456789012345678901234567890", "3.141592653589793238462643383279",
        ]
    )
    func exact(text: String) throws {
        let data = try roundTrip(text)
        #expect(data.exactNumber?.description == text)
    }

    @Test("64-bit integers read back exactly")
    func integerAccessors() throws {
        #expect(try roundTrip("12345678901234567890").unsignedIntegerValue == 12_345_678_901_234_567_890)
        #expect(try roundTrip("12345678901234567890").integerValue == nil)
        #expect(try roundTrip("-9223372036854775808").integerValue == .min)
        #expect(try roundTrip("9007199254740993").integerValue == 9_007_199_254_740_993)
        #expect(try roundTrip("1e3").integerValue == 1000)
        #expect(try roundTrip("1.5").integerValue == nil)
        #expect(JSONValue(UInt64.max).unsignedIntegerValue == .max)
        #expect(JSONValue(Int64.min).integerValue == .min)
    }

    @Test("values the app builds keep their exact form on the wire")
    func built() throws {
        let data: JSONValue = ["id": JSONValue(UInt64(12_345_678_901_234_567_890)), "price": 19.99, "n": 3, "neg": -0.0]
        let encoded = try codec.encode(ClientMessage.publish(id: 1, channel: "c", data: data))
        guard case .text(let text) = encoded else { throw CodecError(.unsupportedFrame, "") }
        #expect(text.contains(#""id":12345678901234567890"#))
        #expect(text.contains(#""price":19.99"#))
        #expect(text.contains(#""n":3"#))
        #expect(text.contains(#""neg":-0.0"#))
        guard case .publish(_, _, let decoded, _) = try codec.decodeClientMessage(encoded) else { throw CodecError(.malformed, "") }
        #expect(decoded == data)
    }

    @Test("equality: the same integer, or the same text")
    func equality() {
        #expect(JSONNumber(3.0) == JSONNumber(3))
        #expect(JSONNumber(UInt64(5)) == JSONNumber(Int64(5)))
        #expect(JSONNumber(json: "1.5") == JSONNumber(1.5))
        #expect(JSONNumber(json: "1.50") != JSONNumber(1.5))
        #expect(JSONNumber(json: "1.50")?.doubleValue == 1.5)
        #expect(JSONNumber(json: "01") == nil)
        #expect(JSONNumber(json: "1e999") == nil)
        #expect(JSONNumber(json: " 1") == nil)
    }

    @Test("NaN and infinities cannot go on the wire: a typed error, not null")
    func nonFinite() {
        for value in [Double.nan, .infinity, -.infinity] {
            #expect(throws: CodecError.self) { try codec.encode(ClientMessage.publish(id: 1, channel: "c", data: ["x": JSONValue(value)])) }
            let error = #expect(throws: CodecError.self) { try codec.encode(ClientMessage.publish(id: 1, channel: "c", data: JSONValue(value))) }
            #expect(error?.code == .invalidNumber)
        }
    }
}

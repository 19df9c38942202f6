import NIOCore
import NIOEmbedded
import NIOTransport
import NIOWebSocket
import SDK
import Testing

/// The NIO transport writes a batch of frames as bytes itself (one write past the frame
/// encoder): what it writes must read back, frame by frame, as NIO's own decoder reads frames.
@Suite("NIO transport: a batch of frames written as bytes")
struct WebSocketFrameWriterTests {
    /// Masking keys from fixed words, so the bytes are known.
    struct FixedWords: RandomNumberGenerator {
        var words: [UInt64]
        mutating func next() -> UInt64 { words.removeFirst() }
    }

    func written(_ frames: [TransportFrame], masked: Bool = true, words: [UInt64]) -> ByteBuffer {
        var keys = FixedWords(words: words)
        var buffer = ByteBuffer()
        WebSocketFrameWriter.write(frames, masked: masked, keys: &keys, into: &buffer)
        return buffer
    }

    @Test("a short masked text frame, byte by byte (RFC 6455 §5.2, §5.3)")
    func shortFrameBytes() {
        let bytes = Array(buffer: written([.text("hello")], words: [0x1122_3344_5566_7788]))
        let key: [UInt8] = [0x55, 0x66, 0x77, 0x88]
        let payload = Array("hello".utf8).enumerated().map { $0.element ^ key[$0.offset % 4] }
        #expect(bytes == [0x81, 0x85] + key + payload)
    }

    @Test("every length form, text and binary, reads back through NIO's decoder with its own key")
    func readsBackThroughNIO() throws {
        let sizes = [0, 1, 125, 126, 127, 65_535, 65_536, 70_001]
        var frames: [TransportFrame] = sizes.map { .text(String(repeating: "é", count: $0 / 2) + String(repeating: "x", count: $0 % 2)) }
        frames.append(.binary((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) }))
        let words = (0..<UInt64(frames.count)).map { 0x0102_0304_0A0B_0C0D &* ($0 + 1) }
        let buffer = written(frames, words: words)
        #expect(buffer.readableBytes == WebSocketFrameWriter.byteCount(of: frames, masked: true))

        let channel = EmbeddedChannel(handler: ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 1 << 20)))
        try channel.writeInbound(buffer)
        for (index, frame) in frames.enumerated() {
            let read = try #require(try channel.readInbound(as: WebSocketFrame.self), "frame \(index) was not read")
            #expect(read.fin)
            // Two keys per word: the low half first.
            let word = words[index / 2]
            let key = UInt32(truncatingIfNeeded: index % 2 == 0 ? word : word >> 32)
            let expectedKey = WebSocketMaskingKey([UInt8(key >> 24), UInt8(truncatingIfNeeded: key >> 16), UInt8(truncatingIfNeeded: key >> 8), UInt8(truncatingIfNeeded: key)])
            #expect(read.maskKey == expectedKey, "frame \(index)")
            switch frame {
            case .text(let text):
                #expect(read.opcode == .text)
                #expect(String(buffer: read.unmaskedData) == text, "frame \(index)")
            case .binary(let bytes):
                #expect(read.opcode == .binary)
                #expect(Array(buffer: read.unmaskedData) == bytes)
            }
        }
        #expect(try channel.readInbound(as: WebSocketFrame.self) == nil)
        _ = try channel.finish()
    }

    @Test("unmasked when not a client: no mask bit, no key, the payload as it is")
    func unmasked() {
        let bytes = Array(buffer: written([.binary([1, 2, 3])], masked: false, words: []))
        #expect(bytes == [0x82, 0x03, 1, 2, 3])
    }
}

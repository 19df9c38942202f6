import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import SDK
import Testing

/// A WebSocket server that completes every upgrade and then breaks the framing rules, for the
/// tests of what the session does with a broken or hostile peer. It speaks no protocol.
final class HostileServer: Sendable {
    enum Behaviour: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// Half of a text frame, then the TCP connection closes.
        case truncatedFrame
        /// A frame with a reserved opcode (0x3); the connection stays open.
        case reservedOpcode
        /// A header announcing a frame of 2^63 − 1 bytes; the connection stays open.
        case oversizeLength
        /// A masked text frame (only clients mask); the connection stays open.
        case maskedFrame
        /// A text frame with a reserved bit set, no extension negotiated; the connection stays open.
        case reservedBit
        /// A text frame that is not UTF-8 (a lead byte followed by an ASCII byte); the
        /// connection stays open.
        case invalidUTF8
        /// A text frame holding the first three bytes of a four-byte sequence: repaired, they
        /// become one U+FFFD of the same length; the connection stays open.
        case truncatedFourByteSequence

        var bytes: [UInt8] {
            switch self {
            case .truncatedFrame: [0x81, 0x7E, 0x00, 0xC8] + Array(#"{"type":"#.utf8)  // 200 bytes announced, 8 sent
            case .reservedOpcode: [0x83, 0x00]
            case .oversizeLength: [0x81, 0x7F, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
            case .maskedFrame: [0x81, 0x82, 0x01, 0x02, 0x03, 0x04, 0x7A, 0x20]
            case .reservedBit: [0xC1, 0x02] + Array("{}".utf8)
            case .invalidUTF8: [0x81, 0x04, 0x22, 0xC3, 0x28, 0x22]
            case .truncatedFourByteSequence: [0x81, 0x05, 0x22, 0xF0, 0x90, 0x80, 0x22]
            }
        }

        var closesAfterwards: Bool { self == .truncatedFrame }
        var testDescription: String { rawValue }
    }

    /// One element per upgraded connection.
    let upgrades: AsyncStream<Void>
    private let upgradeSink: AsyncStream<Void>.Continuation
    private let bytes: [UInt8]
    private let closesAfterwards: Bool

    convenience init(_ behaviour: Behaviour) {
        self.init(bytes: behaviour.bytes, closesAfterwards: behaviour.closesAfterwards)
    }

    /// Writes `bytes` after each upgrade (framing and all), then closes if told to.
    init(bytes: [UInt8], closesAfterwards: Bool = false) {
        self.bytes = bytes
        self.closesAfterwards = closesAfterwards
        (upgrades, upgradeSink) = AsyncStream<Void>.makeStream()
    }

    /// Serves on a free loopback port for the duration of `body`.
    func withRunning<Result: Sendable>(_ body: (Int) async throws -> Result) async throws -> Result {
        let (bytes, closes) = (self.bytes, closesAfterwards)
        let sink = upgradeSink
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let upgrader = NIOWebSocketServerUpgrader(
                    shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
                    upgradePipelineHandler: { channel, _ in
                        sink.yield()
                        return channel.pipeline.addHandler(RawBytesWriter(bytes: bytes, close: closes), position: .first)
                    }
                )
                return channel.pipeline.configureHTTPServerPipeline(withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
            }
            .bind(host: "127.0.0.1", port: 0).get()
        defer {
            channel.close(promise: nil)
            sink.finish()
        }
        return try await body(channel.localAddress?.port ?? 0)
    }
}

/// Writes raw bytes past every encoder (it sits at the head of the pipeline), then optionally
/// closes the connection.
private final class RawBytesWriter: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let bytes: [UInt8]
    let close: Bool

    init(bytes: [UInt8], close: Bool) {
        self.bytes = bytes
        self.close = close
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let written = context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)))
        if close {
            let channel = context.channel
            written.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}

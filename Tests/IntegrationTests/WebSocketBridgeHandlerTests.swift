import NIOCore
import NIOEmbedded
@testable import NIOTransport
import NIOWebSocket
import SDK
import Testing

/// The bridge from WebSocket frames to the reader, on an embedded channel: what it handed over
/// and the reader has not taken is bounded — past it, the socket is not read (TCP holds the
/// server back), and reading goes on once the reader has taken enough. Nothing is dropped.
@Suite("NIO transport: the socket is not read past what the reader has not taken")
struct WebSocketBridgeHandlerTests {
    /// Counts the reads that reach the socket (it sits at the socket's end of the pipeline).
    final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = Any
        var reads = 0
        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }
    }

    @Test("past the limit a read is held; once the reader took enough to be at half, the held read goes; every frame arrives")
    func holdsReadsPastTheLimit() async throws {
        let gate = ReadGate(highWater: 1_000)
        let reads = BatchOutlet(onTaken: { gate.taken($0) })
        let events = reads.stream()
        let counter = ReadCounter()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(counter)
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9))  // an open socket
        try channel.pipeline.syncOperations.addHandler(WebSocketBridgeHandler(reads: reads, closeSent: Locked(false), masked: true, gate: gate))
        func arrive(_ count: Int) throws {
            for _ in 0..<count {
                try channel.writeInbound(WebSocketFrame(fin: true, opcode: .binary, data: ByteBuffer(bytes: Array(repeating: 7, count: 300))))
            }
            channel.pipeline.fireChannelReadComplete()
        }
        try arrive(3)
        channel.read()
        #expect(counter.reads == 1, "900 bytes unread: under the limit, the socket is read")
        try arrive(1)
        channel.read()
        #expect(counter.reads == 1, "1,200 bytes unread: the read is held")
        #expect(gate.pending == 1_200)
        gate.taken(300)
        channel.embeddedEventLoop.run()
        #expect(counter.reads == 1, "900 unread is more than half the limit: still held")
        gate.taken(400)
        channel.embeddedEventLoop.run()
        #expect(counter.reads == 2, "500 unread: the held read goes")
        _ = try channel.finish()
        var frames = 0
        var last: TransportEvent?
        for await batch in events {
            for event in batch {
                if case .frame = event { frames += 1 }
                last = event
            }
        }
        #expect(frames == 4, "nothing dropped")
        #expect(last == .closed(code: nil, reason: "connection closed"))
    }
}

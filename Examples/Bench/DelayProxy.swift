import NIOCore
import NIOPosix

/// A TCP proxy on 127.0.0.1 that delays every byte the server sends by a fixed one-way latency
/// (the client's bytes go through at once), so a round trip costs `delay` — for any server
/// behind it, the upgrade's answer included, and the TCP connect to it not (the figures count
/// round trips after the upgrade's TCP). Bytes keep their order; a close follows the last
/// delayed bytes.
enum DelayProxy {
    /// Runs a proxy to `upstreamPort` for the duration of `body`, which gets its port.
    static func withRunning<Result: Sendable>(
        delay: Duration, upstreamPort: Int, isolation: isolated (any Actor)? = #isolation, _ body: (Int) async throws -> Result
    ) async throws -> Result {
        let amount = TimeAmount.nanoseconds(delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000)
        // An address, not a host name: no resolver on the way to the server.
        let upstream = try SocketAddress(ipAddress: "127.0.0.1", port: upstreamPort)
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.autoRead, value: false)
            // Whatever is there in one read: NIO's adaptive allocator starts at 2 KiB, and a
            // replay's flight was forwarded in pieces, a read each.
            .childChannelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 1 << 16))
            .childChannelInitializer { client in
                ClientBootstrap(group: client.eventLoop)
                    .channelOption(.socketOption(.tcp_nodelay), value: 1)
                    .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 1 << 16))
                    .connect(to: upstream)
                    .flatMapThrowing { upstream in
                        try client.pipeline.syncOperations.addHandler(Forwarder(to: upstream, delay: .zero))
                        try upstream.pipeline.syncOperations.addHandler(Forwarder(to: client, delay: amount))
                        client.read()
                    }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        defer { server.close(promise: nil) }
        return try await body(server.localAddress?.port ?? 0)
    }

    /// Writes what one side reads to the other, `delay` later, in order.
    private final class Forwarder: ChannelInboundHandler, @unchecked Sendable {
        // @unchecked: every member is touched only on the event loop both channels share (the
        // upstream connection is made on the client channel's loop).
        typealias InboundIn = ByteBuffer

        private let peer: any Channel
        private let delay: TimeAmount
        private var queue: [(due: NIODeadline, bytes: ByteBuffer)] = []
        private var head = 0
        private var closeWhenDrained = false
        private var flushScheduled = false

        init(to peer: any Channel, delay: TimeAmount) {
            self.peer = peer
            self.delay = delay
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = unwrapInboundIn(data)
            guard delay > .zero else {
                peer.writeAndFlush(bytes, promise: nil)
                return
            }
            queue.append((.now() + delay, bytes))
            scheduleFlush(on: context.eventLoop)
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            context.read()
        }

        func channelActive(context: ChannelHandlerContext) {
            context.read()
        }

        func channelInactive(context: ChannelHandlerContext) {
            closeWhenDrained = true
            if head == queue.count { peer.close(promise: nil) }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }

        private func scheduleFlush(on loop: any EventLoop) {
            guard !flushScheduled, head < queue.count else { return }
            flushScheduled = true
            loop.assumeIsolatedUnsafeUnchecked().scheduleTask(deadline: queue[head].due) { [self] in
                flushScheduled = false
                let now = NIODeadline.now()
                while head < queue.count, queue[head].due <= now {
                    peer.write(queue[head].bytes, promise: nil)
                    head += 1
                }
                peer.flush()
                if head == queue.count {
                    queue.removeAll(keepingCapacity: true)
                    head = 0
                    if closeWhenDrained { peer.close(promise: nil) }
                }
                scheduleFlush(on: loop)
            }
        }
    }
}

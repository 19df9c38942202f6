public import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
public import SDK
import NIOWebSocket

/// A WebSocket client transport on swift-nio, for Linux (where `URLSessionWebSocketTask` does
/// not work) and for the examples and integration tests. Plain `ws://` only: `wss://` would need
/// swift-nio-ssl, which this example leaves out.
///
/// Client frames are masked; fragmented messages are aggregated (up to `maxFrameBytes`); pings
/// are answered and close frames replied to on the event loop by ``WebSocketBridgeHandler``, so
/// the one reader of `events` only ever sees messages and the final close. What a connection has
/// read and its reader has not taken is bounded (``unreadByteLimit``, one read beyond): past it
/// the socket is not read, and TCP holds the server back; nothing is dropped. A reader of
/// `reads` (the session) takes a batch once it has handled it; `events` takes at once.
public struct NIOWebSocketTransport: Transport {
    /// The bytes of frames a connection holds unread before it stops reading from its socket.
    public static let unreadByteLimit = 1 << 20
    /// The largest message accepted, after aggregating fragments.
    public var maxFrameBytes: Int
    /// How long the TCP connect and the WebSocket upgrade may take, together.
    public var connectTimeout: Duration
    let group: any EventLoopGroup

    public init(maxFrameBytes: Int = 1 << 20, connectTimeout: Duration = .seconds(10)) {
        self.maxFrameBytes = maxFrameBytes
        self.connectTimeout = connectTimeout
        self.group = MultiThreadedEventLoopGroup.singleton
    }

    private enum Upgrade: Sendable {
        case upgraded(any Channel, subprotocol: String?)
        /// The channel, closed once the response's head was read (its status in the box).
        case declined(any Channel, status: Locked<Int?>)
        case badSubprotocol(String)
    }

    public func open(url: URL, headers: [String: String]) async throws -> any TransportConnection {
        try await open(url: url, headers: headers, subprotocols: [])
    }

    public func open(url: URL, headers: [String: String], subprotocols: [String]) async throws -> any TransportConnection {
        guard let scheme = url.scheme?.lowercased(), scheme == "ws" || scheme == "wss" else {
            throw TransportError(.invalidURL, "not a WebSocket URL (scheme \(url.scheme ?? "none"))")
        }
        guard scheme == "ws" else {
            throw TransportError(.unavailable, "this example transport speaks ws:// only (wss:// needs TLS)")
        }
        guard let host = url.host, !host.isEmpty else { throw TransportError(.invalidURL, "the URL has no host") }
        let port = url.port ?? 80
        // The request target keeps the URL's query (Engine.IO's `EIO=4&transport=websocket`).
        let path = (url.path.isEmpty ? "/" : url.path) + (url.query.map { "?" + $0 } ?? "")
        let closeSent = Locked(false)
        let gate = ReadGate(highWater: NIOWebSocketTransport.unreadByteLimit)
        let reads = BatchOutlet(onTaken: { gate.taken($0) })
        let maxFrameBytes = self.maxFrameBytes
        let timeout = TimeAmount.milliseconds(Int64(connectTimeout.components.seconds) * 1000 + connectTimeout.components.attoseconds / 1_000_000_000_000_000)

        // The channel, once there is one: a cancelled `open` closes it (which fails the
        // upgrade's future), and so does the deadline, so `open` never outlives either.
        let pendingChannel = Locked<(any Channel)?>(nil)
        let upgrade: Upgrade
        do {
            let bootstrap = ClientBootstrap(group: group)
                .connectTimeout(timeout)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
            let initialize: @Sendable (any Channel) -> EventLoopFuture<EventLoopFuture<Upgrade>> = { channel in
                    pendingChannel.withLock { $0 = channel }
                    return channel.eventLoop.makeCompletedFuture {
                        let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(
                            maxFrameSize: maxFrameBytes,
                            upgradePipelineHandler: { channel, response in
                                channel.eventLoop.makeCompletedFuture {
                                    // RFC 6455 §4.1: the server may choose one offered subprotocol, or none.
                                    let chosen = response.headers.first(name: "sec-websocket-protocol")?.trimmingCharacters(in: .whitespaces)
                                    if let chosen, !subprotocols.contains(chosen) {
                                        channel.close(promise: nil)
                                        return Upgrade.badSubprotocol(chosen)
                                    }
                                    let sync = channel.pipeline.syncOperations
                                    try sync.addHandler(
                                        NIOWebSocketFrameAggregator(
                                            minNonFinalFragmentSize: 0,
                                            maxAccumulatedFrameCount: 1 << 16,
                                            maxAccumulatedFrameSize: maxFrameBytes
                                        )
                                    )
                                    try sync.addHandler(WebSocketBridgeHandler(reads: reads, closeSent: closeSent, masked: true, gate: gate))
                                    return Upgrade.upgraded(channel, subprotocol: chosen)
                                }
                            }
                        )
                        var requestHeaders = HTTPHeaders()
                        requestHeaders.add(name: "Host", value: "\(host):\(port)")
                        requestHeaders.add(name: "Content-Length", value: "0")
                        for (name, value) in headers { requestHeaders.add(name: name, value: value) }
                        if !subprotocols.isEmpty { requestHeaders.add(name: "Sec-WebSocket-Protocol", value: subprotocols.joined(separator: ", ")) }
                        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: requestHeaders)
                        let configuration = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
                            upgradeRequestHead: head,
                            upgraders: [upgrader],
                            notUpgradingCompletionHandler: { channel in
                                // The response is handed on after this returns: read its status,
                                // then let the socket go.
                                let status = Locked<Int?>(nil)
                                return channel.eventLoop.makeCompletedFuture {
                                    try channel.pipeline.syncOperations.addHandler(RefusedUpgradeReader(status: status))
                                    return Upgrade.declined(channel, status: status)
                                }
                            }
                        )
                        var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
                        // Frames the server sends right after its 101 can arrive in the same read
                        // as the 101 itself: hand them to the WebSocket decoder (NIO's default
                        // drops them, and the connection then looks open and delivers nothing).
                        pipeline.leftOverBytesStrategy = .forwardBytes
                        return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
                    }
                }
            // An IP address needs no resolver (NIO's goes through getaddrinfo on a thread pool,
            // a few hundred microseconds a connect).
            let negotiated: EventLoopFuture<Upgrade> =
                if let address = try? SocketAddress(ipAddress: host, port: port) {
                    try await bootstrap.connect(to: address, channelInitializer: initialize)
                } else {
                    try await bootstrap.connect(host: host, port: port, channelInitializer: initialize)
                }
            let deadline = negotiated.eventLoop.scheduleTask(in: timeout) {
                pendingChannel.withLock { $0 }?.close(promise: nil)
            }
            upgrade = try await withTaskCancellationHandler {
                try await negotiated.get()
            } onCancel: {
                pendingChannel.withLock { $0 }?.close(promise: nil)
            }
            deadline.cancel()
        } catch let error as TransportError {
            reads.finish()
            throw error
        } catch {
            reads.finish()
            throw TransportError(.connectionFailed, "could not open ws://\(host):\(port)\(path): \(error)")
        }
        switch upgrade {
        case .upgraded(let channel, let subprotocol):
            return NIOWebSocketConnection(channel: channel, reads: reads, closeSent: closeSent, masked: true, gate: gate, subprotocol: subprotocol)
        case .declined(let channel, let status):
            reads.finish()
            // The reader closes the channel once it has the status (or the deadline does).
            let deadline = channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
            try? await channel.closeFuture.get()
            deadline.cancel()
            let code = status.withLock { $0 }
            throw TransportError(
                .handshakeFailed, "the server at \(host):\(port) did not upgrade to WebSocket" + (code.map { ": HTTP \($0)" } ?? ""), httpStatus: code
            )
        case .badSubprotocol(let chosen):
            reads.finish()
            throw TransportError(.handshakeFailed, "the server chose the subprotocol '\(chosen.prefix(60))', which was not offered (\(subprotocols))")
        }
    }
}

/// One open WebSocket, client or server side.
public final class NIOWebSocketConnection: TransportConnection, EventBatchingConnection {
    let channel: any Channel
    /// What each read brought, in order (the session attaches to it).
    package let reads: BatchOutlet
    private let flattened = Locked<AsyncStream<TransportEvent>?>(nil)
    private let closeSent: Locked<Bool>
    private let masked: Bool
    public let subprotocol: String?

    /// What the bridge handed over and the reader has not taken (the socket is not read past it).
    let gate: ReadGate

    init(channel: any Channel, reads: BatchOutlet, closeSent: Locked<Bool>, masked: Bool, gate: ReadGate, subprotocol: String? = nil) {
        self.channel = channel
        self.reads = reads
        self.gate = gate
        self.closeSent = closeSent
        self.masked = masked
        self.subprotocol = subprotocol
    }

    /// The events one at a time (a task unpacks the batches; read this or `reads`).
    public var events: AsyncStream<TransportEvent> {
        flattened.withLock { stream in
            if let stream { return stream }
            let (events, continuation) = AsyncStream<TransportEvent>.makeStream()
            let (batches, reads) = (reads.stream(), reads)
            let pump = Task {
                for await batch in batches {
                    // Taken at once: a reader of single events gets no flow control.
                    reads.taken(batch)
                    for event in batch { continuation.yield(event) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in pump.cancel() }
            stream = events
            return events
        }
    }

    public func send(_ frame: TransportFrame) async throws {
        try await send(contentsOf: [frame])
    }

    /// Writes the frames in one write, flushed; returns when they are written.
    public func send(contentsOf frames: [TransportFrame]) async throws {
        guard !closeSent.withLock({ $0 }), channel.isActive else { throw TransportError(.notConnected, "the WebSocket is closed") }
        guard !frames.isEmpty else { return }
        var bytes = channel.allocator.buffer(capacity: WebSocketFrameWriter.byteCount(of: frames, masked: masked))
        var keys = SystemRandomNumberGenerator()
        WebSocketFrameWriter.write(frames, masked: masked, keys: &keys, into: &bytes)
        let channel = self.channel
        let written = bytes
        let sent = channel.eventLoop.flatSubmit {
            // Whole frames already: they go in after the frame encoder, in order with what it
            // writes (both on this event loop).
            do {
                return try channel.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self).writeAndFlush(NIOAny(written))
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
        }
        do {
            try await sent.get()
        } catch {
            throw TransportError(.notConnected, "send failed: \(error)")
        }
    }

    /// Sends a close frame, waits up to a second for the peer to close, then closes the socket.
    public func close(code: CloseCode, reason: String) async {
        let first = closeSent.withLock { sent in
            defer { sent = true }
            return !sent
        }
        if first, channel.isActive {
            var data = ByteBuffer()
            data.write(webSocketErrorCode: WebSocketErrorCode(codeNumber: Int(code.rawValue)))
            data.writeString(String(reason.utf8.prefix(120)) ?? "")
            let frame = WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: masked ? .random() : nil, data: data)
            try? await channel.writeAndFlush(frame).get()
            let channel = self.channel
            let deadline = channel.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
            try? await channel.closeFuture.get()
            deadline.cancel()
        } else {
            try? await channel.close()
        }
    }
}

/// Reads the status of a response that refused the upgrade, then closes the connection.
private final class RefusedUpgradeReader: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPClientResponsePart

    let status: Locked<Int?>

    init(status: Locked<Int?>) { self.status = status }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = Self.unwrapInboundIn(data) {
            status.withLock { $0 = Int(head.status.code) }
            context.close(promise: nil)
        }
    }
}

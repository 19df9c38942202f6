import NIOCore
import NIOPosix
import SDK

/// A WebSocket client with no manners, for testing servers: it writes whatever bytes or frames
/// it is told (unmasked, reserved bits, invalid UTF-8, an upgrade a byte at a time), can stop
/// reading, and reads the server's frames raw. Every read has a deadline, so a check never hangs.
public actor RawWebSocket {
    /// A frame from the server.
    public struct Frame: Sendable, Hashable {
        public var opcode: UInt8
        public var payload: [UInt8]

        public var text: String { String(decoding: payload, as: UTF8.self) }

        /// For a close frame: its code, if it has one.
        public var closeCode: UInt16? {
            guard opcode == 0x8, payload.count >= 2 else { return nil }
            return UInt16(payload[0]) << 8 | UInt16(payload[1])
        }
    }

    /// The server did not answer in time, or broke the framing.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    private let channel: any Channel
    private let inbox: Inbox
    private var pending: [UInt8] = []
    private var ended = false

    private init(channel: any Channel, inbox: Inbox) {
        self.channel = channel
        self.inbox = inbox
    }

    /// Opens a TCP connection (nothing is sent yet); `receiveBuffer` sets the socket's kernel
    /// buffer (small, so a reader that stops reading backs the server up sooner).
    public static func connect(host: String, port: Int, receiveBuffer: Int? = nil) async throws -> RawWebSocket {
        let inbox = Inbox()
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
        if let receiveBuffer { bootstrap = bootstrap.channelOption(.socketOption(.so_rcvbuf), value: SocketOptionValue(receiveBuffer)) }
        let channel = try await bootstrap
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(ByteBridge(inbox: inbox)) }
            }
            .connect(host: host, port: port).get()
        return RawWebSocket(channel: channel, inbox: inbox)
    }

    /// Opens a connection and completes a WebSocket upgrade of `/`; throws unless it is 101.
    public static func upgraded(host: String, port: Int, receiveBuffer: Int? = nil) async throws -> RawWebSocket {
        let socket = try await connect(host: host, port: port, receiveBuffer: receiveBuffer)
        let status = try await socket.upgrade(host: host, port: port)
        guard status == 101 else {
            await socket.close()
            throw Failure("the upgrade was answered \(status)")
        }
        return socket
    }

    /// The upgrade request's bytes, with `extraHeaders` ("Name: value" lines).
    public static func upgradeRequest(host: String, port: Int, extraHeaders: [String] = []) -> [UInt8] {
        let extra = extraHeaders.map { $0 + "\r\n" }.joined()
        return Array("GET / HTTP/1.1\r\nHost: \(host):\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\(extra)\r\n".utf8)
    }

    /// Sends the upgrade request and returns the response's status code.
    public func upgrade(host: String, port: Int, within limit: Duration = .seconds(5)) async throws -> Int {
        try await upgradeAnswer(host: host, port: port, within: limit).status
    }

    /// Sends the upgrade request with `extraHeaders`; the response's status and head (the
    /// status line and header lines).
    public func upgradeAnswer(host: String, port: Int, extraHeaders: [String] = [], within limit: Duration = .seconds(5)) async throws -> (status: Int, head: String) {
        try await send(Self.upgradeRequest(host: host, port: port, extraHeaders: extraHeaders))
        let head = try await readHead(within: limit)
        let parts = head.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { throw Failure("not an HTTP response: \(head.prefix(60))") }
        return (status, head)
    }

    public func send(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(channel.allocator.buffer(bytes: bytes)).get()
    }

    /// Sends one frame: masked by default (as a client must), FIN set, with the given opcode,
    /// reserved bits (`rsv` in the top three bits' place: 0x40, 0x20, 0x10) and payload.
    public func sendFrame(opcode: UInt8, _ payload: [UInt8], masked: Bool = true, rsv: UInt8 = 0, fin: Bool = true) async throws {
        try await send(Self.frameBytes(opcode: opcode, payload, masked: masked, rsv: rsv, fin: fin))
    }

    public func sendText(_ text: String) async throws {
        try await sendFrame(opcode: 0x1, Array(text.utf8))
    }

    /// A close frame with `code` and `reason`.
    public func sendClose(code: UInt16, reason: String = "") async throws {
        try await sendFrame(opcode: 0x8, [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8))
    }

    static func frameBytes(opcode: UInt8, _ payload: [UInt8], masked: Bool, rsv: UInt8, fin: Bool) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | rsv | (opcode & 0x0F)]
        let maskBit: UInt8 = masked ? 0x80 : 0
        switch payload.count {
        case ..<126: bytes.append(maskBit | UInt8(payload.count))
        case ..<65536: bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default: bytes += [maskBit | 127] + (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        guard masked else { return bytes + payload }
        let key: [UInt8] = (0..<4).map { _ in UInt8.random(in: 0...255) }
        return bytes + key + payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
    }

    /// The next frame from the server; `nil` once the connection has ended.
    public func nextFrame(within limit: Duration = .seconds(5)) async throws -> Frame? {
        let deadline = ContinuousClock.now + limit
        while true {
            if let frame = try parseFrame() { return frame }
            guard try await readMore(until: deadline) else { return nil }
        }
    }

    /// The next text frame (answering nothing, skipping pings and pongs); `nil` at a close
    /// frame or the end. The close frame, if any, is returned by ``closeFrame(within:)``.
    public func nextText(within limit: Duration = .seconds(5)) async throws -> String? {
        let deadline = ContinuousClock.now + limit
        while true {
            guard let frame = try await nextFrame(within: deadline - .now) else { return nil }
            switch frame.opcode {
            case 0x1: return frame.text
            case 0x8:
                pushBack(frame)
                return nil
            default: continue
            }
        }
    }

    /// Reads until the server's close frame (returned) or the end of the connection (`nil`
    /// frame, `true` ended); throws if neither comes in time.
    public func closeFrame(within limit: Duration = .seconds(5)) async throws -> Frame? {
        let deadline = ContinuousClock.now + limit
        while let frame = try await nextFrame(within: deadline - .now) {
            if frame.opcode == 0x8 { return frame }
        }
        return nil
    }

    /// Waits until the server has ended the TCP connection; false if it is still open then.
    public func waitUntilEnded(within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while !ended {
            guard (try? await readMore(until: deadline)) == true else { return ended }
            pending = []
        }
        return true
    }

    /// Stops taking bytes from the socket (the server's writes then back up), or resumes.
    public func setReading(_ reading: Bool) async throws {
        try await channel.setOption(.autoRead, value: reading).get()
        if reading { channel.read() }
    }

    public func close() async {
        try? await channel.close().get()
    }

    private var pushedBack: [Frame] = []

    private func pushBack(_ frame: Frame) { pushedBack.insert(frame, at: 0) }

    /// One more read, within `deadline`; false when the connection has ended. A wait that
    /// times out leaves the connection as it was.
    private func readMore(until deadline: ContinuousClock.Instant) async throws -> Bool {
        while true {
            let (bytes, hasEnded, signal) = inbox.take()
            if !bytes.isEmpty {
                pending += bytes
                return true
            }
            if hasEnded {
                ended = true
                return false
            }
            let remaining = deadline - .now
            guard remaining > .zero else { throw Failure("no answer in time") }
            if await !signal.wait(upTo: remaining), inbox.isEmpty { throw Failure("no answer in time") }
        }
    }

    private func readHead(within limit: Duration) async throws -> String {
        let deadline = ContinuousClock.now + limit
        while true {
            if let end = pending.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: pending[..<end.lowerBound], as: UTF8.self)
                pending.removeFirst(end.upperBound)
                return head
            }
            guard try await readMore(until: deadline) else { throw Failure("the connection ended during the upgrade") }
        }
    }

    private func parseFrame() throws -> Frame? {
        if !pushedBack.isEmpty { return pushedBack.removeFirst() }
        guard pending.count >= 2 else { return nil }
        let opcode = pending[0] & 0x0F
        if pending[1] & 0x80 != 0 { throw Failure("the server sent a masked frame") }
        var length = Int(pending[1] & 0x7F)
        var offset = 2
        if length == 126 {
            guard pending.count >= 4 else { return nil }
            length = Int(pending[2]) << 8 | Int(pending[3])
            offset = 4
        } else if length == 127 {
            guard pending.count >= 10 else { return nil }
            length = pending[2..<10].reduce(0) { $0 << 8 | Int($1) }
            offset = 10
        }
        guard pending.count >= offset + length else { return nil }
        let payload = Array(pending[offset..<offset + length])
        pending.removeFirst(offset + length)
        return Frame(opcode: opcode, payload: payload)
    }
}

/// What the socket received and not yet taken, and whether it ended; `signal` fires at every
/// change (and is replaced).
final class Inbox: Sendable {
    private struct State {
        var bytes: [UInt8] = []
        var ended = false
        var signal = OneShot()
    }

    private let state = Locked(State())

    var isEmpty: Bool { state.withLock { $0.bytes.isEmpty && !$0.ended } }

    func append(_ buffer: ByteBuffer) {
        let signal = state.withLock { state in
            state.bytes += buffer.readableBytesView
            defer { state.signal = OneShot() }
            return state.signal
        }
        signal.fire()
    }

    func end() {
        let signal = state.withLock { state in
            state.ended = true
            defer { state.signal = OneShot() }
            return state.signal
        }
        signal.fire()
    }

    /// The bytes received so far (now taken), whether the connection ended, and the signal of
    /// the next change.
    func take() -> ([UInt8], Bool, OneShot) {
        state.withLock { state in
            defer { state.bytes = [] }
            return (state.bytes, state.ended, state.signal)
        }
    }
}

/// Hands every read to the inbox, and ends it when the connection does.
private final class ByteBridge: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    let inbox: Inbox

    init(inbox: Inbox) { self.inbox = inbox }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        inbox.append(Self.unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        inbox.end()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        inbox.end()
        context.close(promise: nil)
    }
}

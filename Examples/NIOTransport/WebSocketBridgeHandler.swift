import NIOCore
import SDK
import NIOWebSocket

/// Turns WebSocket frames into ``TransportEvent``s handed to the connection's reader, one batch per read, on the event loop: it
/// answers pings, replies to a close frame the peer started, and reports the end exactly once
/// (a close frame's code and reason, or the socket ending without one). What it handed over and
/// the reader has not taken is bounded (``ReadGate``): past it, the socket is not read.
final class WebSocketBridgeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let reads: BatchOutlet
    private let closeSent: Locked<Bool>
    private let masked: Bool
    private let gate: ReadGate
    private var isFinished = false
    /// A read the gate held back: it goes once the reader has taken enough.
    private var readHeld = false
    /// The frames of the read in progress: handed over together when the read completes.
    private var arrived: [TransportEvent] = []

    init(reads: BatchOutlet, closeSent: Locked<Bool>, masked: Bool, gate: ReadGate) {
        self.reads = reads
        self.closeSent = closeSent
        self.masked = masked
        self.gate = gate
    }

    func read(context: ChannelHandlerContext) {
        guard gate.mayRead() else {
            readHeld = true
            return
        }
        context.read()
    }

    /// The reader took enough: the read held back goes.
    private func readOnIfHeld(context: ChannelHandlerContext) {
        guard readHeld else { return }
        readHeld = false
        context.read()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = Self.unwrapInboundIn(data)
        // RFC 6455 §5.1–5.2: a client fails the connection on a masked frame from the server, or
        // on reserved bits no extension was negotiated for.
        if masked, frame.maskKey != nil {
            return failConnection(context: context, "the server sent a masked frame")
        }
        if frame.rsv1 || frame.rsv2 || frame.rsv3 {
            return failConnection(context: context, "a frame with reserved bits set (no extension was negotiated)")
        }
        switch frame.opcode {
        case .text:
            // RFC 6455 §8.1: text that is not UTF-8 fails the connection (1007); it is never
            // repaired into replacement characters the app would take for the server's data.
            guard let text = Self.validText(frame.unmaskedData) else {
                return failConnection(context: context, "a text frame that is not UTF-8", code: .dataInconsistentWithMessage)
            }
            arrived.append(.frame(.text(text)))
        case .binary:
            arrived.append(.frame(.binary(Array(buffer: frame.unmaskedData))))
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: masked ? .random() : nil, data: frame.unmaskedData)
            context.writeAndFlush(Self.wrapOutboundOut(pong), promise: nil)
        case .pong:
            break
        case .connectionClose:
            var data = frame.unmaskedData
            let code = data.readWebSocketErrorCode()
            let reason = data.readString(length: data.readableBytes) ?? ""
            // Report first: the reply's write may complete at once and close the channel, and
            // the close frame's code must win over "connection closed".
            finish(.closed(code: code.map { CloseCode(UInt16(truncatingIfNeeded: Self.number(of: $0))) }, reason: reason))
            let weStarted = closeSent.withLock { sent in
                defer { sent = true }
                return sent
            }
            if !weStarted {
                sendCloseThenRelease(context: context, code: code)  // echo the code
            } else {
                context.close(promise: nil)
            }
        default:
            failConnection(context: context, "a frame with reserved opcode \(frame.opcode)")
        }
    }

    /// The peer broke the WebSocket rules: report it (no close code came from the peer), send
    /// 1002 protocol error, and let the socket go.
    private func failConnection(context: ChannelHandlerContext, _ violation: String, code: WebSocketErrorCode = .protocolError) {
        finish(.closed(code: nil, reason: "protocol violation: \(violation)"))
        closeSent.withLock { $0 = true }
        sendCloseThenRelease(context: context, code: code)
    }

    /// Writes a close frame (with `code`, if any), then lets the socket go.
    private func sendCloseThenRelease(context: ChannelHandlerContext, code: WebSocketErrorCode?) {
        var data = ByteBuffer()
        if let code { data.write(webSocketErrorCode: code) }
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: masked ? .random() : nil, data: data)
        let channel = context.channel
        context.writeAndFlush(Self.wrapOutboundOut(frame)).whenComplete { _ in channel.close(promise: nil) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        handOver()
        context.fireChannelReadComplete()
    }

    /// Hands the read's frames to the reader, as one batch.
    private func handOver(_ last: TransportEvent? = nil) {
        if let last { arrived.append(last) }
        guard !arrived.isEmpty else { return }
        gate.handedOver(arrived.frameBytes)
        reads.yield(arrived)
        arrived = []
    }

    /// The frame's text if its bytes are UTF-8, `nil` if not. `String(decoding:as:)` validates
    /// on the standard library's fast path but repairs what is not UTF-8 with U+FFFD; where it
    /// repaired, its bytes differ from the frame's (the first repaired place holds EF BF BD,
    /// which the frame cannot hold there: that would have been valid). One pass to decode and
    /// one comparison, eight bytes at a time: `String(validating:as:)` over a `ByteBufferView`
    /// runs unspecialized, with metadata lookups on every call.
    static func validText(_ buffer: ByteBuffer) -> String? {
        buffer.withUnsafeReadableBytes { bytes in
            var text = String(decoding: bytes, as: UTF8.self)
            return text.withUTF8 { sameBytes(UnsafeRawBufferPointer($0), bytes) } ? text : nil
        }
    }

    private static func sameBytes(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Bool {
        guard left.count == right.count else { return false }
        var offset = 0
        while offset + 8 <= left.count {
            guard left.loadUnaligned(fromByteOffset: offset, as: UInt64.self) == right.loadUnaligned(fromByteOffset: offset, as: UInt64.self) else { return false }
            offset += 8
        }
        while offset < left.count {
            guard left[offset] == right[offset] else { return false }
            offset += 1
        }
        return true
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, context), eventLoop: loop)
        gate.onRoom {
            loop.execute {
                let (handler, context) = bound.value
                handler.readOnIfHeld(context: context)
            }
        }
        // The peer may close while the upgrade completes, before this handler is in the
        // pipeline: then no channelInactive will come, and the end must be reported now.
        if !context.channel.isActive { finish(.closed(code: nil, reason: "connection closed")) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.closed(code: nil, reason: "connection closed"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.closed(code: nil, reason: "connection error: \(error)"))
        context.close(promise: nil)
    }

    private func finish(_ event: TransportEvent) {
        guard !isFinished else { return }
        isFinished = true
        gate.onRoom(nil)
        handOver(event)
        reads.finish()
    }

    static func number(of code: WebSocketErrorCode) -> Int {
        var buffer = ByteBuffer()
        buffer.write(webSocketErrorCode: code)
        return Int(buffer.readInteger(as: UInt16.self) ?? 1005)
    }
}

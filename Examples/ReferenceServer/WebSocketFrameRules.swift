import NIOCore
import NIOWebSocket

/// RFC 6455 §5 for the server side, on every raw frame before fragments are joined: a client
/// frame must be masked (§5.1), have no reserved bit set (no extension is negotiated, §5.2) and
/// no reserved opcode. A frame that breaks a rule fails the connection: close 1002, then the
/// socket goes.
final class WebSocketFrameRules: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private var failed = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        let frame = Self.unwrapInboundIn(data)
        if let violation = Self.violation(in: frame) {
            failed = true
            Self.fail(context.channel, code: .protocolError, reason: violation)
            return
        }
        context.fireChannelRead(data)
    }

    static func violation(in frame: WebSocketFrame) -> String? {
        if frame.maskKey == nil { return "unmasked client frame" }
        if frame.rsv1 || frame.rsv2 || frame.rsv3 { return "reserved bits set" }
        switch frame.opcode {
        case .continuation, .text, .binary, .connectionClose, .ping, .pong: return nil
        default: return "reserved opcode"
        }
    }

    /// Writes a close frame with `code`, then lets the socket go once it is written.
    static func fail(_ channel: any Channel, code: WebSocketErrorCode, reason: String) {
        var data = ByteBuffer()
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}

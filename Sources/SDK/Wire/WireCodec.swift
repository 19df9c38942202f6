/// Turns protocol messages into transport frames and back. The session speaks to a server only
/// through a codec, so another protocol can be added by writing another one.
package protocol WireCodec: Sendable {
    /// The frame for a message this client sends.
    func encode(_ message: ClientMessage) throws(CodecError) -> TransportFrame
    /// The message in a frame the server sent. Throws for a malformed, oversize or unknown frame.
    func decode(_ frame: TransportFrame) throws(CodecError) -> ServerMessage
    /// The channel's message in `frame` when the codec reads it directly (as servers write it),
    /// given as it was built: no ``ServerMessage`` around it to copy it out of. `nil` otherwise:
    /// ``decode(_:)`` then says what the frame is.
    func channelMessage(in frame: TransportFrame) -> ChannelMessage?
}

extension WireCodec {
    /// None read directly: every frame goes through ``decode(_:)``.
    package func channelMessage(in frame: TransportFrame) -> ChannelMessage? { nil }
}

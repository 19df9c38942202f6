/// Turns protocol messages into transport frames and back. The session speaks to a server only
/// through a codec, so another protocol can be added by writing another one.
package protocol WireCodec: Sendable {
    /// The frame for a message this client sends.
    func encode(_ message: ClientMessage) throws(CodecError) -> TransportFrame
    /// The message in a frame the server sent. Throws for a malformed, oversize or unknown frame.
    func decode(_ frame: TransportFrame) throws(CodecError) -> ServerMessage
}

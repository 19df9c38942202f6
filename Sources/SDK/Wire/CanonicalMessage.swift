/// A server's `message` read without building its envelope, when its text is exactly what
/// ``JSONWireCodec/encode(_:)-(ServerMessage)`` writes: members in sorted order, no whitespace —
/// `{"channel":"…","data":…,"seq":N,"type":"message"}`, the channel a string with nothing to
/// unescape, `N` a whole number from 0 to 2^64 − 1 with no leading zero. `data` is read by the
/// JSON parser, as the whole frame's parse reads it (same depth, same limit). Any other text goes
/// through the parser, which reads it — or refuses it — as before. Every message a client
/// receives is read this way: the parser built a dictionary of the envelope's four members for
/// each, and hashed their names again to look them up (half of a message's decoding).
enum CanonicalMessage {
    /// The message `text` holds, or `nil` when it is not in the canonical form, or holds a
    /// channel or data the codec refuses (the parser then says why).
    static func parse(_ text: String, maxDepth: Int) -> ChannelMessage? {
        var text = text
        return text.withUTF8 { bytes in
            var scanner = CanonicalScanner(bytes: bytes)
            guard scanner.take(#"{"channel":"#), let channel = scanner.plainString(), (try? JSONWireCodec.checkChannel(channel)) != nil,
                scanner.take(#","data":"#)
            else { return nil }
            // The envelope is depth 0 of the whole text: its members' values are at depth 1.
            guard let data = JSONParser.value(in: bytes, at: &scanner.index, depth: 1, maxDepth: maxDepth),
                scanner.take(#","seq":"#), let sequence = scanner.number(), scanner.take(#","type":"message"}"#), scanner.isAtEnd
            else { return nil }
            return ChannelMessage(channel: channel, sequence: sequence, data: data)
        }
    }
}

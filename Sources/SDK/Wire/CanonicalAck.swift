/// A server's `ok` read without the JSON parser, when its text is exactly what
/// ``JSONWireCodec/encode(_:)-(ServerMessage)`` writes: members in sorted order, no whitespace —
/// `{"gap":true|false,` (optional), `"id":N,`, `"seq":N,` (optional), `"type":"ok"}`, each `N` a
/// whole number from 0 to 2^64 − 1 with no leading zero. Any other text (another order, spaces,
/// more members, a `null`, a number the parser would refuse) is not matched, and goes through
/// the parser, which reads it — or refuses it — as before. A replay's hundreds of `ok`s are read
/// this way: the parser builds a dictionary of four members for each.
enum CanonicalAck {
    /// The acknowledgement `text` holds, or `nil` when it is not in the canonical form.
    static func parse(_ text: String) -> Ack? {
        var text = text
        return text.withUTF8 { bytes in
            var scanner = CanonicalScanner(bytes: bytes)
            guard scanner.take("{") else { return nil }
            var gap = false
            if scanner.take(#""gap":true,"#) {
                gap = true
            } else {
                _ = scanner.take(#""gap":false,"#)
            }
            guard scanner.take(#""id":"#), let id = scanner.number(), scanner.take(",") else { return nil }
            var sequence: UInt64?
            if scanner.take(#""seq":"#) {
                guard let value = scanner.number(), scanner.take(",") else { return nil }
                sequence = value
            }
            guard scanner.take(#""type":"ok"}"#), scanner.isAtEnd else { return nil }
            return Ack(id: id, sequence: sequence, gap: gap)
        }
    }
}

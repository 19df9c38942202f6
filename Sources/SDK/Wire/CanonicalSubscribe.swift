/// A client's `subscribe` read without the JSON parser, when its text is exactly what
/// ``JSONWireCodec/encode(_:)-(ClientMessage)`` writes: members in sorted order, no whitespace —
/// `{"channel":"NAME",`, `"id":N,`, `"since":N,` (optional), `"type":"subscribe"}` — with a
/// name that has nothing to unescape, each `N` a whole number from 0 to 2^64 − 1 with no leading
/// zero. Any other text goes through the parser, which reads it — or refuses it — as before. A
/// server answering a replay reads hundreds of these at once; the parser builds a dictionary of
/// four members for each.
enum CanonicalSubscribe {
    /// The `subscribe` `text` holds, or `nil` when it is not in the canonical form. The channel's
    /// name is not checked here (the codec checks it as it checks the parser's).
    static func parse(_ text: String) -> (id: RequestID, channel: String, since: UInt64?)? {
        var text = text
        return text.withUTF8 { bytes in
            var scanner = CanonicalScanner(bytes: bytes)
            guard scanner.take(#"{"channel":"#), let channel = scanner.plainString(),
                  scanner.take(#","id":"#), let id = scanner.number(), scanner.take(",") else { return nil }
            var since: UInt64?
            if scanner.take(#""since":"#) {
                guard let value = scanner.number(), scanner.take(",") else { return nil }
                since = value
            }
            guard scanner.take(#""type":"subscribe"}"#), scanner.isAtEnd else { return nil }
            return (id, channel, since)
        }
    }
}

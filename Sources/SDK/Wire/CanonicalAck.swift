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
            var scanner = Scanner(bytes: bytes)
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

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var isAtEnd: Bool { index == bytes.count }
        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        /// Consumes `literal` when the text goes on with it.
        mutating func take(_ literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            let matches = literal.withUTF8Buffer { expected in
                (0..<count).allSatisfy { bytes[index + $0] == expected[$0] }
            }
            if matches { index += count }
            return matches
        }

        /// A JSON whole number that fits 64 bits: digits, no leading zero (but `0` itself), no
        /// fraction or exponent (the literal after it must follow at once).
        mutating func number() -> UInt64? {
            let start = index
            var value: UInt64 = 0
            while let byte = peek, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                let (shifted, overflowShift) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflowAdd) = shifted.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
                guard !overflowShift, !overflowAdd else { return nil }
                value = sum
                index += 1
            }
            let digits = index - start
            guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
            return value
        }
    }
}

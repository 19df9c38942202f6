/// Reads a text in the one form a codec writes, byte by byte (``CanonicalAck``,
/// ``CanonicalSubscribe``): each step either matches and moves on, or tells its reader to leave
/// the text to the JSON parser.
struct CanonicalScanner {
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

    /// A JSON string with nothing to unescape: its bytes up to the closing quote, none of them a
    /// backslash or a control character (those go to the parser, which unescapes or refuses
    /// them). The text is a `String`, so its bytes are UTF-8.
    mutating func plainString() -> String? {
        guard take("\"") else { return nil }
        let start = index
        while let byte = peek, byte != UInt8(ascii: "\"") {
            guard byte >= 0x20, byte != UInt8(ascii: "\\") else { return nil }
            index += 1
        }
        guard take("\"") else { return nil }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index - 1]), as: UTF8.self)
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

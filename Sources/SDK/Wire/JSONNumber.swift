/// A JSON number, kept exactly as it was written: integers exactly across the whole `Int64`
/// and `UInt64` range (snowflake ids, database keys), every other number as the text it was
/// sent with (so `0.1`, `1e300` or a 30-digit integer go through a session or the reference
/// server unchanged, and never grow when re-encoded).
///
/// Two numbers are equal when they are the same integer, or otherwise when they were written
/// the same way: `1.5` and `1.50` differ (compare ``doubleValue`` for numeric closeness). A
/// `Double` without a fraction that fits 64 bits becomes that integer (`JSONNumber(3.0) ==
/// 3`); `-0.0` keeps its sign. JSON has no NaN or infinity: such a value can be made, but a
/// codec refuses to encode it (``CodecError/Code/invalidNumber``).
public struct JSONNumber: Hashable, Sendable, CustomStringConvertible {
    enum Storage: Hashable, Sendable {
        /// An integer that fits `Int64`.
        case int(Int64)
        /// An integer above `Int64.max` that fits `UInt64`.
        case uint(UInt64)
        /// Any other number: its JSON text, valid by construction.
        case text(String)
        /// NaN or an infinity, which JSON cannot carry.
        case nonFinite(Double)
    }

    let storage: Storage

    init(storage: Storage) { self.storage = storage }

    /// An integer.
    public init(_ value: Int) { storage = .int(Int64(value)) }

    /// A 64-bit integer.
    public init(_ value: Int64) { storage = .int(value) }

    /// An unsigned 64-bit integer.
    public init(_ value: UInt64) {
        storage = value <= UInt64(Int64.max) ? .int(Int64(value)) : .uint(value)
    }

    /// A floating-point number (NaN and infinities cannot be sent: JSON has no way to write them).
    public init(_ value: Double) {
        if !value.isFinite {
            storage = .nonFinite(value)
        } else if value == 0, value.sign == .minus {
            storage = .text("-0.0")
        } else if value.rounded(.towardZero) == value, let exact = Int64(exactly: value) {
            storage = .int(exact)
        } else if value.rounded(.towardZero) == value, let exact = UInt64(exactly: value) {
            storage = .uint(exact)
        } else {
            // Swift's shortest representation that reads back as the same Double; it is valid
            // JSON for every finite value ("1.5", "1e+300", "5e-324").
            storage = .text(value.description)
        }
    }

    /// The number in a JSON text, if `text` is exactly one JSON number (RFC 8259 §6) whose
    /// magnitude a 64-bit float can hold.
    public init?(json text: String) {
        var copy = text
        let parsed: JSONNumber? = copy.withUTF8 { buffer in
            var index = 0
            guard let number = try? Self.parse(buffer, at: &index), index == buffer.count else { return nil }
            return number
        }
        guard let parsed else { return nil }
        self = parsed
    }

    /// The value as an `Int64`, if it is an integer in that range (written without a fraction or
    /// exponent; or one that denotes a whole number a `Double` holds exactly, like `1e3`).
    public var int64Value: Int64? {
        switch storage {
        case .int(let value): value
        case .uint: nil
        case .text(let text): Self.exactWholeNumber(text).flatMap { Int64(exactly: $0) }
        case .nonFinite: nil
        }
    }

    /// The value as a `UInt64`, if it is a whole number in that range.
    public var uint64Value: UInt64? {
        switch storage {
        case .int(let value): value >= 0 ? UInt64(value) : nil
        case .uint(let value): value
        case .text(let text): Self.exactWholeNumber(text).flatMap { UInt64(exactly: $0) }
        case .nonFinite: nil
        }
    }

    /// The nearest `Double` (integers above 2^53 lose precision here: read them with
    /// ``int64Value`` or ``uint64Value``).
    public var doubleValue: Double {
        switch storage {
        case .int(let value): Double(value)
        case .uint(let value): Double(value)
        case .text(let text): Double(text) ?? .nan
        case .nonFinite(let value): value
        }
    }

    /// Indicates that JSON can carry the number (it is not NaN or an infinity).
    public var isFinite: Bool {
        if case .nonFinite = storage { false } else { true }
    }

    /// The JSON text of the number (for NaN and the infinities, which JSON cannot carry, Swift's
    /// own spelling).
    public var description: String {
        switch storage {
        case .int(let value): String(value)
        case .uint(let value): String(value)
        case .text(let text): text
        case .nonFinite(let value): value.description
        }
    }

    /// A whole number a `Double` holds exactly (within ±2^53), for texts like `1e3` or `2.0`.
    private static func exactWholeNumber(_ text: String) -> Double? {
        guard let value = Double(text), value.rounded(.towardZero) == value, abs(value) <= 9_007_199_254_740_992 else { return nil }
        return value
    }
}

extension JSONNumber: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral {
    public init(integerLiteral value: Int64) { self.init(value) }
    public init(floatLiteral value: Double) { self.init(value) }
}

extension JSONNumber {
    /// Reads one JSON number at `index` in valid UTF-8, advancing past it. Plain integers that
    /// fit 64 bits are computed exactly without going through text; every other number is kept
    /// as its text, after checking that a `Double` can hold its magnitude.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, at index: inout Int) throws(JSONParseError) -> JSONNumber {
        let start = index
        let isNegative = bytes[index] == UInt8(ascii: "-")
        if isNegative { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw JSONParseError("invalid number", at: start) }
        // The magnitude of a plain integer, while it fits; nil once it does not.
        var magnitude: UInt64? = 0
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, isDigit(bytes[index]) {
                let digit = UInt64(bytes[index] &- UInt8(ascii: "0"))
                if let current = magnitude {
                    let (times10, overflow1) = current.multipliedReportingOverflow(by: 10)
                    let (sum, overflow2) = times10.addingReportingOverflow(digit)
                    magnitude = overflow1 || overflow2 ? nil : sum
                }
                index += 1
            }
        }
        var isPlainInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isPlainInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw JSONParseError("invalid number", at: start) }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isPlainInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw JSONParseError("invalid number", at: start) }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if isPlainInteger, let magnitude {
            if !isNegative { return JSONNumber(magnitude) }
            if magnitude <= UInt64(Int64.max) { return JSONNumber(storage: magnitude == 0 ? .text("-0") : .int(-Int64(magnitude))) }
            if magnitude == UInt64(Int64.max) + 1 { return JSONNumber(storage: .int(.min)) }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw JSONParseError("number out of range", at: start) }
        return JSONNumber(storage: .text(text))
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}

/// A JSON value: what a message carries. Build one with literals
/// (`["text": "hi", "n": 3]`) or the initializers (`JSONValue(id)` for an `Int64` or `UInt64`
/// id), and read it with the accessors. Numbers are kept exactly (``JSONNumber``): a 64-bit
/// integer arrives as it was sent.
///
/// JSON's own kinds of value; these cases are all there will be.
@frozen
public enum JSONValue: Hashable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, kept exactly as it was written.
    case number(JSONNumber)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// The number as the nearest `Double`, if this is one (read 64-bit integers with
    /// ``integerValue`` or ``unsignedIntegerValue``: a `Double` holds integers exactly only up
    /// to 2^53).
    public var numberValue: Double? {
        if case .number(let value) = self { value.doubleValue } else { nil }
    }

    /// The exact number, if this is one.
    public var exactNumber: JSONNumber? {
        if case .number(let value) = self { value } else { nil }
    }

    /// The whole number, exactly, if this is an integer that fits `Int64`.
    public var integerValue: Int64? {
        if case .number(let value) = self { value.int64Value } else { nil }
    }

    /// The whole number, exactly, if this is an integer that fits `UInt64`.
    public var unsignedIntegerValue: UInt64? {
        if case .number(let value) = self { value.uint64Value } else { nil }
    }

    /// The Boolean, if this is one.
    public var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }

    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { value } else { nil }
    }

    /// The members, if this is an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { value } else { nil }
    }

    /// The member `key`, if this is an object that has it.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(JSONNumber(value)) }
    public init(floatLiteral value: Double) { self = .number(JSONNumber(value)) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue {
    /// A number from an `Int`.
    public init(_ value: Int) { self = .number(JSONNumber(value)) }
    /// A number from an `Int64`.
    public init(_ value: Int64) { self = .number(JSONNumber(value)) }
    /// A number from a `UInt64`.
    public init(_ value: UInt64) { self = .number(JSONNumber(value)) }
    /// A number from a `Double`.
    public init(_ value: Double) { self = .number(JSONNumber(value)) }
    /// A string.
    public init(_ value: String) { self = .string(value) }
    /// A Boolean.
    public init(_ value: Bool) { self = .bool(value) }
}

extension JSONValue: CustomStringConvertible {
    /// The value as compact JSON text.
    public var description: String { JSONWriter.text(self) }
}

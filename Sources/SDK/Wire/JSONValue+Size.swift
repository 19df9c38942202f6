extension JSONValue {
    /// About how many bytes the value's JSON text takes (strings counted without escapes,
    /// numbers as 8): what a subscriber's byte bound counts, without writing the text.
    package var approximateByteCount: Int {
        switch self {
        case .null, .bool: 5
        case .number: 8
        case .string(let text): text.utf8.count + 2
        case .array(let values): values.reduce(2) { $0 + $1.approximateByteCount + 1 }
        case .object(let members): members.reduce(2) { $0 + $1.key.utf8.count + 4 + $1.value.approximateByteCount }
        }
    }
}

extension [ChannelMessage] {
    /// The messages' data, about as many bytes as its JSON text.
    package var approximateByteCount: Int { reduce(0) { $0 + $1.data.approximateByteCount } }
}

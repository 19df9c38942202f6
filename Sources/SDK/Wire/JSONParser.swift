/// Parses JSON text into ``JSONValue`` with limits on depth and length. It never traps on
/// input: every malformed text gives a ``JSONParseError`` naming the byte offset.
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private let maxDepth: Int

    /// Parses a string in place (a native string is contiguous UTF-8: nothing is copied).
    static func parse(_ text: String, maxDepth: Int = 32) throws(JSONParseError) -> JSONValue {
        var text = text
        let result: Result<JSONValue, JSONParseError> = text.withUTF8 { buffer in
            do throws(JSONParseError) {
                return .success(try parse(buffer, maxDepth: maxDepth))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Parses bytes, which are validated as UTF-8 once, first.
    static func parse(_ bytes: [UInt8], maxDepth: Int = 32) throws(JSONParseError) -> JSONValue {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw JSONParseError("invalid UTF-8", at: 0) }
        return try parse(text, maxDepth: maxDepth)
    }

    /// Parses valid UTF-8 (the bytes of a `String`): string values are taken as they are.
    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw JSONParseError("unexpected text after the value", at: parser.index) }
        return value
    }

    /// The value at `index` of valid UTF-8 `bytes` (the bytes of a `String`), read as the
    /// whole text's parse reads a value at `depth` — the same value, the same limit — and
    /// `index` moved past it; nil where it does not parse (the whole text's parse says why).
    static func value(in bytes: UnsafeBufferPointer<UInt8>, at index: inout Int, depth: Int, maxDepth: Int) -> JSONValue? {
        var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
        parser.index = index
        guard let value = try? parser.parseValue(depth: depth) else { return nil }
        index = parser.index
        return value
    }

    private init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth < maxDepth else { throw JSONParseError("nesting deeper than \(maxDepth) levels", at: index, isDepthLimit: true) }
        guard index < bytes.count else { throw JSONParseError("unexpected end of text", at: index) }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectWord("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectWord("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectWord("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw JSONParseError("unexpected character", at: index)
        }
    }

    private mutating func expectWord(_ word: StaticString) throws(JSONParseError) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw JSONParseError("unexpected end of text", at: index) }
        let matches = word.withUTF8Buffer { buffer in
            buffer.indices.allSatisfy { bytes[index + $0] == buffer[$0] }
        }
        guard matches else { throw JSONParseError("invalid literal", at: index) }
        index += count
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object([:])
        }
        // Room for a typical message object at once, instead of growing one insert at a time.
        // (Not `reserveCapacity`: unspecialized in the standard library, it looked up the
        // dictionary's generic metadata at run time, twice per message frame.)
        var members = [String: JSONValue](minimumCapacity: 8)
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw JSONParseError("expected a member name", at: index) }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw JSONParseError("expected ':'", at: index) }
            index += 1
            skipWhitespace()
            members[key] = try parseValue(depth: depth + 1)
            skipWhitespace()
            guard index < bytes.count else { throw JSONParseError("unexpected end of text", at: index) }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "}") else { throw JSONParseError("expected ',' or '}'", at: index) }
            index += 1
            return .object(members)
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard index < bytes.count else { throw JSONParseError("unexpected end of text", at: index) }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "]") else { throw JSONParseError("expected ',' or ']'", at: index) }
            index += 1
            return .array(elements)
        }
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONNumber {
        try JSONNumber.parse(bytes, at: &index)
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        let start = index
        index += 1
        // Fast path: no escapes.
        var scan = index
        while scan < bytes.count {
            let byte = bytes[scan]
            if byte == UInt8(ascii: "\"") {
                let text = try validUTF8(bytes[index..<scan], at: index)
                index = scan + 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw JSONParseError("control character in a string", at: scan) }
            scan += 1
        }
        guard scan < bytes.count else { throw JSONParseError("unterminated string", at: start) }
        var buffer: [UInt8] = Array(bytes[index..<scan])
        index = scan
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return try validUTF8(buffer, at: start)
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw JSONParseError("unterminated string", at: start) }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""): buffer.append(0x22)
                case UInt8(ascii: "\\"): buffer.append(0x5C)
                case UInt8(ascii: "/"): buffer.append(0x2F)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                            throw JSONParseError("unpaired surrogate", at: index)
                        }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw JSONParseError("unpaired surrogate", at: index) }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw JSONParseError("unpaired surrogate", at: index)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw JSONParseError("invalid escape", at: index) }
                    buffer.append(contentsOf: Array(String(Character(unicode)).utf8))
                default:
                    throw JSONParseError("invalid escape", at: index - 1)
                }
            default:
                if byte < 0x20 { throw JSONParseError("control character in a string", at: index) }
                buffer.append(byte)
                index += 1
            }
        }
        throw JSONParseError("unterminated string", at: start)
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw JSONParseError("invalid \\u escape", at: index) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw JSONParseError("invalid \\u escape", at: index)
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }
}

extension JSONParser {
    /// The value of member `name` of the top-level object in `text` (its last occurrence), read
    /// without building — or recursing into — any other member, so it works on a frame of any
    /// depth. `nil` when the text is not an object, or the member is missing, unreadable or not
    /// a scalar.
    static func topLevelMember(_ name: String, in text: String) -> JSONValue? {
        var text = text
        return text.withUTF8 { buffer in
            // Depth 2: the object, and a scalar member value.
            var parser = JSONParser(bytes: buffer, maxDepth: 2)
            return parser.scanMembers(for: name)
        }
    }

    private mutating func scanMembers(for name: String) -> JSONValue? {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        var found: JSONValue?
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let key = try? parseString() else { return found }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return found }
            index += 1
            skipWhitespace()
            if key == name {
                guard let value = try? parseValue(depth: 1) else { return found }
                found = value
            } else if !skipValue() {
                return found
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ",") else { return found }
            index += 1
        }
    }

    /// Steps over one value without building it: containers by counting brackets (outside
    /// strings), iteratively. False at the end of the text.
    private mutating func skipValue() -> Bool {
        var depth = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                guard (try? parseString()) != nil else { return false }
                if depth == 0 { return true }
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 0 { return true }
                depth -= 1
                if depth == 0 {
                    index += 1
                    return true
                }
            case UInt8(ascii: ","), 0x20, 0x0A, 0x0D, 0x09:
                if depth == 0 { return true }
            default:
                break
            }
            index += 1
        }
        return depth == 0
    }
}

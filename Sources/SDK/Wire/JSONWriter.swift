/// Writes ``JSONValue`` as compact JSON text (object members in sorted order, so the output is
/// stable). Re-encoding what ``JSONParser`` read never makes it longer: numbers are written as
/// they were read, and every escape is the shortest JSON has.
enum JSONWriter {
    /// Why a value cannot be written as JSON a receiver accepts.
    enum Failure: Error, Hashable {
        /// A value sits deeper than the limit (the top-level value is level 1).
        case tooDeep(limit: Int)
        /// NaN or an infinity: JSON has no spelling for them.
        case nonFiniteNumber(String)
    }

    /// The text of `value` for people (descriptions, logs): no depth limit, and NaN or an
    /// infinity spelled as Swift does.
    static func text(_ value: JSONValue) -> String {
        var output = ""
        try? write(value, into: &output, depth: 0, maxDepth: .max, strict: false)
        return output
    }

    /// The text of `value` as a receiver with these limits accepts it, or why it cannot be.
    static func checkedText(_ value: JSONValue, maxDepth: Int) throws(Failure) -> String {
        var output = ""
        try write(value, into: &output, depth: 0, maxDepth: maxDepth, strict: true)
        return output
    }

    /// `depth` counts from 0 for the top-level value, exactly as ``JSONParser`` counts, so the
    /// writer refuses precisely what the parser would.
    private static func write(_ value: JSONValue, into output: inout String, depth: Int, maxDepth: Int, strict: Bool) throws(Failure) {
        guard depth < maxDepth else { throw .tooDeep(limit: maxDepth) }
        switch value {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .number(let number):
            if strict, !number.isFinite { throw .nonFiniteNumber(number.description) }
            output += number.description
        case .string(let string): writeString(string, into: &output)
        case .array(let elements):
            output += "["
            for (offset, element) in elements.enumerated() {
                if offset > 0 { output += "," }
                try write(element, into: &output, depth: depth + 1, maxDepth: maxDepth, strict: strict)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (offset, key) in members.keys.sorted().enumerated() {
                if offset > 0 { output += "," }
                writeString(key, into: &output)
                output += ":"
                try write(members[key]!, into: &output, depth: depth + 1, maxDepth: maxDepth, strict: strict)
            }
            output += "}"
        }
    }

    static func writeString(_ string: String, into output: inout String) {
        output += "\""
        var needsEscape = false
        for byte in string.utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C {
            needsEscape = true
            break
        }
        guard needsEscape else {
            output += string
            output += "\""
            return
        }
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }
}

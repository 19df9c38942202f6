/// Writes ``JSONValue`` as compact JSON text (object members in sorted order, so the output is
/// stable).
enum JSONWriter {
    static func text(_ value: JSONValue) -> String {
        var output = ""
        write(value, into: &output)
        return output
    }

    static func write(_ value: JSONValue, into output: inout String) {
        switch value {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .number(let number): writeNumber(number, into: &output)
        case .string(let string): writeString(string, into: &output)
        case .array(let elements):
            output += "["
            for (offset, element) in elements.enumerated() {
                if offset > 0 { output += "," }
                write(element, into: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (offset, key) in members.keys.sorted().enumerated() {
                if offset > 0 { output += "," }
                writeString(key, into: &output)
                output += ":"
                write(members[key]!, into: &output)
            }
            output += "}"
        }
    }

    static func writeNumber(_ number: Double, into output: inout String) {
        guard number.isFinite else {
            // JSON has no infinities or NaN.
            output += "null"
            return
        }
        if number.rounded() == number, abs(number) < 9.007_199_254_740_992e15 {
            output += String(Int64(number))
        } else {
            output += String(number)
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

extension Array where Element == UInt8 {
    /// The bytes a hex string spells, two digits each (as transcripts show binary frames).
    init(hex text: String) {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        self = bytes
    }
}

extension JSONParser {
    /// The text of valid UTF-8 bytes (the input is a `String`'s, so every slice between two
    /// ASCII quotes is valid; decoding a buffer this way needs no generic metadata at run time).
    func validUTF8(_ slice: Slice<UnsafeBufferPointer<UInt8>>, at offset: Int) throws(JSONParseError) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: slice), as: UTF8.self)
    }

    func validUTF8(_ bytes: [UInt8], at offset: Int) throws(JSONParseError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw JSONParseError("invalid UTF-8", at: offset) }
        return text
    }
}

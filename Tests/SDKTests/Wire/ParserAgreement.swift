@testable import SDK
import Testing

/// Every text one edit away from each of `texts` (a byte deleted, inserted, or replaced by a
/// byte of `alphabet`), and the texts themselves: what a direct reader of a canonical form
/// must either read as the parser does or leave to it.
func textsOneEditAway(from texts: [String], alphabet: String) -> Set<String> {
    let alphabet = Array(alphabet.utf8)
    var edited = Set(texts)
    for text in texts {
        let bytes = Array(text.utf8)
        for index in bytes.indices {
            var deleted = bytes
            deleted.remove(at: index)
            edited.insert(String(decoding: deleted, as: UTF8.self))
            for byte in alphabet {
                var inserted = bytes
                inserted.insert(byte, at: index)
                edited.insert(String(decoding: inserted, as: UTF8.self))
                var replaced = bytes
                replaced[index] = byte
                edited.insert(String(decoding: replaced, as: UTF8.self))
            }
        }
    }
    return edited
}

/// The direct reading and the parser's gave the same message, or the same refusal.
func expectSameAnswer<Message: Equatable>(_ text: String, direct: Result<Message, CodecError>, parser: Result<Message, CodecError>) {
    switch (direct, parser) {
    case (.success(let a), .success(let b)): #expect(a == b, "\(text)")
    case (.failure(let a), .failure(let b)): #expect(a.code == b.code && a.description == b.description, "\(text)")
    default: Issue.record("\(text): \(direct) but the parser: \(parser)")
    }
}

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

/// Each of `texts`, decoded by each codec directly and through the parser, gives the same answer;
/// the number of texts `isDirect` says are read directly. It gives way after each text: tens of
/// thousands of decodes must not hold one of the test runner's threads for seconds (under ASan
/// that starved the suites beside it, whose servers' timers then fired first).
func serverTextsAgreeWithParser(_ texts: Set<String>, codecs: [JSONWireCodec], isDirect: (String) -> Bool) async -> Int {
    var direct = 0
    for text in texts {
        await Task.yield()
        if isDirect(text) { direct += 1 }
        for codec in codecs {
            expectSameAnswer(
                text,
                direct: Result { () throws(CodecError) in try codec.decode(.text(text)) },
                parser: Result { () throws(CodecError) in try codec.decodeThroughParser(.text(text)) }
            )
        }
    }
    return direct
}

import SDK
import Testing

/// The set's digest and the varints pinned to `docs/PROTOCOL.md`'s definitions, computed here
/// independently: client and server share the code, so only a test against the text catches a
/// change both would make alike.
extension TetherResumeSetTests {
    @Test("the digest is FNV-1a 64 over each member's channel, a zero byte, its base in decimal, a zero byte", arguments: [
        [("news", 0), ("room", 40)], [("a", 9), ("b", 10), ("c", 99), ("d", 1000)], [("é", UInt64.max), ("x", 1 << 40)],
    ] as [[(String, UInt64)]])
    func digestAsDocumented(members: [(String, UInt64)]) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for (channel, base) in members {
            for byte in Array(channel.utf8) + [0] + Array(String(base).utf8) + [0] {
                hash ^= UInt64(byte)
                hash = hash &* 0x0100_0000_01b3
            }
        }
        #expect(TetherResumeSet.digest(members.map { member($0.0, $0.1) }) == hash)
    }

    @Test("varints are base-64url digits of five bits, most significant first, every one but the last with 32 set")
    func varintsAsDocumented() {
        func text(_ value: UInt64) -> String {
            var bytes: [UInt8] = []
            TetherResumeSet.appendVarint(value, to: &bytes)
            return String(decoding: bytes, as: UTF8.self)
        }
        #expect([0, 31, 32, 1023, 1024].map(text) == ["A", "f", "hA", "_f", "hgA"])
        #expect(text(UInt64.max) == "v" + String(repeating: "_", count: 11) + "f", "64 bits: a group of four, then twelve of five")
    }
}

/// Where backoff jitter comes from: a fixed value for tests that assert exact delays, or a
/// seeded generator (SplitMix64) for production and reproducible runs. A value, so a policy
/// that holds one stays a value.
public struct JitterSource: Hashable, Sendable {
    enum Kind: Hashable, Sendable {
        case fixed(Double)
        case seeded(UInt64)
    }

    var kind: Kind

    /// Always the same number in `0..<1` (clamped): for tests.
    public static func fixed(_ unitRandom: Double) -> JitterSource {
        JitterSource(kind: .fixed(min(max(unitRandom, 0), 1)))
    }

    /// A reproducible stream of numbers from a seed.
    public static func seeded(_ seed: UInt64) -> JitterSource {
        JitterSource(kind: .seeded(seed))
    }

    /// A stream seeded from the system's random source.
    public static func random() -> JitterSource {
        var generator = SystemRandomNumberGenerator()
        return .seeded(generator.next())
    }

    /// The next number in `0..<1`.
    public mutating func next() -> Double {
        switch kind {
        case .fixed(let value):
            return value
        case .seeded(var state):
            // SplitMix64.
            state &+= 0x9E37_79B9_7F4A_7C15
            kind = .seeded(state)
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            return Double(z >> 11) / Double(1 << 53)
        }
    }
}

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
        case .seeded(let state):
            var generator = SplitMix64(seed: state)
            let z = generator.next()
            kind = .seeded(generator.state)
            return Double(z >> 11) / Double(1 << 53)
        }
    }
}

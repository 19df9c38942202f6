/// How long to wait before each reconnect attempt: exponential from `initial`, multiplied by
/// `multiplier` each attempt, capped at `maximum`, shortened by up to `jitter` (a fraction of
/// the delay) so that many clients do not retry in step, and stopping after `maxAttempts`.
///
/// A value: `delay(forAttempt:unitRandom:)` is a pure function, so tests assert exact delays.
public struct Backoff: Hashable, Sendable, CustomStringConvertible {
    /// The delay before the first retry.
    public var initial: Duration
    /// The factor from one delay to the next (at least 1).
    public var multiplier: Double
    /// The longest delay.
    public var maximum: Duration
    /// The largest fraction of a delay that jitter may remove, in `0...1`.
    public var jitter: Double
    /// The number of failed attempts in a row after which the policy gives up; `nil` never gives up.
    public var maxAttempts: Int?

    /// A backoff from `initial`, multiplied by `multiplier` after each failed attempt up to
    /// `maximum`, with `jitter` (a fraction of each delay, 0 to 1) and at most `maxAttempts`
    /// attempts (`nil`: no limit).
    public init(
        initial: Duration = .milliseconds(500),
        multiplier: Double = 2,
        maximum: Duration = .seconds(30),
        jitter: Double = 0.2,
        maxAttempts: Int? = nil
    ) {
        self.initial = initial
        self.multiplier = multiplier
        self.maximum = maximum
        self.jitter = jitter
        self.maxAttempts = maxAttempts
    }

    /// The default: 0.5 s, doubling, capped at 30 s, 20 % jitter, never giving up.
    public static let standard = Backoff()

    /// What is wrong with these values, or `nil` when they are valid.
    public var problem: String? {
        if initial <= .zero { return "initial delay must be positive (got \(initial))" }
        if !(multiplier >= 1) || !multiplier.isFinite { return "multiplier must be a finite number of at least 1 (got \(multiplier))" }
        if maximum < initial { return "maximum delay \(maximum) is shorter than the initial delay \(initial)" }
        if !(0...1).contains(jitter) { return "jitter must be within 0...1 (got \(jitter))" }
        if let maxAttempts, maxAttempts < 1 { return "maxAttempts must be at least 1 (got \(maxAttempts))" }
        return nil
    }

    /// The delay before retry number `attempt` (1 is the first), given a random number in `0..<1`.
    public func delay(forAttempt attempt: Int, unitRandom: Double) -> Duration {
        let exponent = Double(max(attempt, 1) - 1)
        let initialSeconds = initial.seconds
        let capSeconds = maximum.seconds
        var seconds = initialSeconds
        // Multiply step by step so a large attempt number saturates at the cap instead of overflowing.
        var step = 0.0
        while step < exponent, seconds < capSeconds {
            seconds *= multiplier
            step += 1
        }
        seconds = min(seconds, capSeconds)
        let random = min(max(unitRandom, 0), 1)
        seconds *= 1 - jitter * random
        return .nanoseconds(Int64((seconds * 1e9).rounded()))
    }

    /// Indicates that `failedAttempts` failures in a row exhaust the limit.
    public func isExhausted(afterFailedAttempts failedAttempts: Int) -> Bool {
        guard let maxAttempts else { return false }
        return failedAttempts >= maxAttempts
    }

    public var description: String {
        var text = "backoff(\(initial) ×\(multiplier) ≤ \(maximum), jitter \(jitter)"
        if let maxAttempts { text += ", at most \(maxAttempts) attempts" }
        return text + ")"
    }
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}

import ConnectionPolicy
import Testing

@Suite("Backoff")
struct BackoffTests {
    @Test(
        "delays grow exponentially and stop at the cap",
        arguments: [(1, 500), (2, 1000), (3, 2000), (4, 4000), (5, 8000), (6, 10000), (60, 10000), (Int.max, 10000)] as [(Int, Int64)]
    )
    func exponential(attempt: Int, milliseconds: Int64) {
        let backoff = Backoff(initial: .milliseconds(500), multiplier: 2, maximum: .seconds(10), jitter: 0)
        #expect(backoff.delay(forAttempt: attempt, unitRandom: 0.7) == .milliseconds(milliseconds))
    }

    @Test("jitter removes up to its fraction of the delay, exactly as the random number says")
    func jitter() {
        let backoff = Backoff(initial: .seconds(1), multiplier: 2, maximum: .seconds(60), jitter: 0.2)
        #expect(backoff.delay(forAttempt: 1, unitRandom: 0) == .seconds(1))
        #expect(backoff.delay(forAttempt: 1, unitRandom: 0.5) == .milliseconds(900))
        #expect(backoff.delay(forAttempt: 3, unitRandom: 1) == .milliseconds(3200))
    }

    @Test("the attempt limit is reached after exactly maxAttempts failures")
    func limit() {
        let backoff = Backoff(maxAttempts: 3)
        #expect(!backoff.isExhausted(afterFailedAttempts: 2))
        #expect(backoff.isExhausted(afterFailedAttempts: 3))
        #expect(!Backoff(maxAttempts: nil).isExhausted(afterFailedAttempts: 1_000_000))
    }

    @Test(
        "invalid values are named",
        arguments: [
            Backoff(initial: .zero),
            Backoff(multiplier: 0.5),
            Backoff(multiplier: .infinity),
            Backoff(initial: .seconds(2), maximum: .seconds(1)),
            Backoff(jitter: 1.5),
            Backoff(maxAttempts: 0),
        ]
    )
    func invalid(backoff: Backoff) {
        #expect(backoff.problem != nil)
    }

    @Test("the standard backoff is valid")
    func standardIsValid() {
        #expect(Backoff.standard.problem == nil)
    }

    @Test("a seeded jitter source repeats itself and stays within 0..<1")
    func seededJitter() {
        var a = JitterSource.seeded(42)
        var b = JitterSource.seeded(42)
        for _ in 0..<1000 {
            let value = a.next()
            #expect(value == b.next())
            #expect((0..<1).contains(value))
        }
        var fixed = JitterSource.fixed(0.25)
        #expect(fixed.next() == 0.25)
        #expect(fixed.next() == 0.25)
    }
}

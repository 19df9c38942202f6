@testable import SDK
import Testing

/// The progress an iterator writes and the stall check reads: the same count with atomics and with
/// the lock older Apple systems take.
@Suite("TakenCounter")
struct TakenCounterTests {
    @Test("each kind reads what was last written, from zero", arguments: [true, false])
    func counts(atomic: Bool) {
        let counter = TakenCounter(atomic: atomic)
        #expect(counter.value == 0)
        for value in [1, 2, 1_000] as [UInt64] {
            counter.set(value)
            #expect(counter.value == value)
        }
    }
}

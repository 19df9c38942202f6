@testable import SDK
import Testing

@Suite("OneShot and race", .timeLimit(.minutes(1)))
struct OneShotTests {
    @Test("fire wakes every waiter; a wait after the fire returns at once")
    func fire() async {
        let signal = OneShot()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<10 { group.addTask { await signal.wait() } }
            signal.fire()
        }
        await signal.wait()
        #expect(signal.hasFired)
    }

    @Test("race returns the work's result and the losing wait never hangs (20,000 times)")
    func raceNeverHangs() async {
        // The losing side is a cancelled wait; cancellation landing before the wait registers
        // its continuation used to leave it waiting until the signal fired.
        for round in 0..<20_000 {
            let cancel = OneShot()
            let (result, cancelled) = await race({ round }, cancelledBy: cancel)
            #expect(!cancelled)
            guard case .success(let value)? = result, value == round else {
                Issue.record("round \(round): \(String(describing: result))")
                return
            }
        }
    }

    @Test("a cancelled waiter returns without the signal")
    func cancelledWaiter() async {
        let signal = OneShot()
        let task = Task { await signal.wait() }
        task.cancel()
        await task.value
        #expect(!signal.hasFired)
    }
}

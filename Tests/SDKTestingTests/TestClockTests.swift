import SDKTesting
import Testing

@Suite("TestClock")
struct TestClockTests {
    @Test("a sleeper wakes exactly when time reaches its deadline, not before")
    func wakesAtDeadline() async throws {
        let clock = TestClock()
        try await confirmation("woke") { woke in
            try await withThrowingTaskGroup(of: Void.self) { group in
                let deadline = clock.now.advanced(by: .seconds(10))
                group.addTask {
                    try await clock.sleep(until: deadline)
                    woke()
                }
                await clock.advance(by: .milliseconds(9_999))
                #expect(clock.wakeUps == 0)
                await clock.advance(by: .milliseconds(1))
                try await group.waitForAll()
            }
        }
        #expect(clock.wakeUps == 1)
        #expect(clock.now.offset == .seconds(10))
    }

    @Test("a sleep whose deadline has passed returns at once")
    func pastDeadline() async throws {
        let clock = TestClock()
        let deadline = clock.now.advanced(by: .seconds(1))
        await clock.advance(by: .seconds(5))
        try await clock.sleep(until: deadline)
        #expect(clock.sleeperCount == 0)
    }

    @Test("a cancelled sleep throws and leaves no sleeper")
    func cancellation() async {
        let clock = TestClock()
        let task = Task { try await clock.sleep(until: clock.now.advanced(by: .seconds(60))) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.sleeperCount == 0)
    }
}

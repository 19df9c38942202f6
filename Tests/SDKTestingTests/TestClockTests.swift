import SDK
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

    /// A session whose every connect is refused: its retries follow the backoff (1 s, 2 s, 4 s,
    /// 8 s), each armed when the previous attempt fails — a chain of timers.
    static func refusedSession(_ clock: TestClock, _ server: TestServer) throws -> (Session, InMemoryTransport) {
        server.setRefusingConnections(true)
        let transport = server.transport()
        let settings = try AppSettings.testing { $0.reconnectBackoff(Backoff(initial: .seconds(1), multiplier: 2, maximum: .seconds(8), jitter: 0)) }
        return (Session(settings: settings, transport: transport, clock: clock), transport)
    }

    @Test("advance(by:) fires the timers armed on the way, in order; advanceWithoutSettling(by:) only what was due when it began")
    func advanceFiresChains() async throws {
        let clock = TestClock(), server = TestServer()
        let (session, transport) = try Self.refusedSession(clock, server)
        try await withRunningSession(session) { _ in
            await clock.settle()
            #expect(transport.requestedURLs.count == 1, "the launch's attempt")
            await clock.advance(by: .seconds(10))
            // Attempts at t = 0, 1, 3 and 7; the next is due at 15.
            #expect(transport.requestedURLs.count == 4)
            #expect(clock.now.offset == .seconds(10))
            #expect(clock.nextDeadline?.offset == .seconds(15))
        }
        let plainClock = TestClock()
        let (plain, plainTransport) = try Self.refusedSession(plainClock, TestServer())
        try await withRunningSession(plain) { _ in
            await plainClock.settle()
            await plainClock.advanceWithoutSettling(by: .seconds(10))
            await plainClock.settle()
            #expect(plainTransport.requestedURLs.count == 2, "one retry: the next backoff was armed after the jump, from t = 10")
            #expect(plainClock.nextDeadline?.offset == .seconds(12))
        }
    }

    @Test("a fire handled before the boundary is seen: after advance(by:) short of a deadline nothing due later has run, and everything due before has")
    func advanceSettlesEachFire() async throws {
        // The retry due at t = 1 s (backoff 1 s) is handled by the session before advance(by:)
        // returns; the one due at t = 3 s is not, however the tasks are scheduled.
        for _ in 0..<50 {
            let clock = TestClock()
            let (session, transport) = try Self.refusedSession(clock, TestServer())
            try await withRunningSession(session) { _ in
                await clock.advance(by: .milliseconds(999))
                #expect(transport.requestedURLs.count == 1)
                await clock.advance(by: .milliseconds(1))
                #expect(transport.requestedURLs.count == 2, "the retry due at 1 s was handled before advance(by:) returned")
                await clock.advance(by: .milliseconds(1_999))
                #expect(transport.requestedURLs.count == 2)
                await clock.advance(by: .milliseconds(1))
                #expect(transport.requestedURLs.count == 3)
            }
        }
    }

    @Test("runUntilIdle: in the background (Auto) nothing is scheduled and nothing more happens; a heartbeat never ends")
    func runUntilIdle() async throws {
        let clock = TestClock(), server = TestServer(), lifecycle = LifecycleDriver()
        let session = Session(settings: try .testing(), transport: server.transport(), clock: clock, lifecycle: lifecycle)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            await lifecycle.background()
            #expect(await clock.runUntilIdle() == .idle)
            #expect(clock.sleeperCount == 0 && clock.activeWork == 0)
            #expect(server.acceptedConnectionCount == 1 && session.status == .disconnected(.appBackgrounded))
        }
        let beating = TestClock()
        let heartbeat = Session(settings: try .testing { $0.heartbeat(interval: .seconds(25), timeout: .seconds(10)) }, transport: TestServer().transport(), clock: beating)
        try await withRunningSession(heartbeat) { status in
            try await status.waitFor(.connected)
            guard case .stillScheduled(let next) = await beating.runUntilIdle(limit: .seconds(120)) else {
                Issue.record("a heartbeat goes on forever")
                return
            }
            #expect(next.offset > .seconds(120))
            #expect(heartbeat.status == .connected, "every ping answered on the way")
        }
    }

    @Test("settle: a message the server publishes has reached the session when it returns")
    func settleDeliversServerEvents() async throws {
        let clock = TestClock(), server = TestServer()
        let session = Session(settings: try .testing(), transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let subscription = try await session.subscribe(to: "news")
            for index in 1...20 {
                try server.publish(["n": JSONValue(index)], to: "news")
                await clock.settle()
                #expect(session.subscribedChannels["news"] == .some(.some(UInt64(index))), "message \(index) handled by the session")
            }
            _ = subscription
        }
    }
}

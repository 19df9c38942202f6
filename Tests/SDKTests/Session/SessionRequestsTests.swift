import SDK
import SDKTesting
import Testing

/// Request timeouts: every pending request keeps its own deadline, though one timer serves them
/// all (a replay sends hundreds of requests at once).
@Suite("Session: request timeouts", .timeLimit(.minutes(1)))
struct SessionRequestsTests {
    let clock = TestClock()
    let lifecycle = LifecycleDriver()

    @Test("each request times out at its own deadline, oldest first; the timer goes once none is pending")
    func ownDeadlines() async throws {
        let server = TestServer()
        let settings = try AppSettings.testing(auto: true) { $0.requestTimeout(.seconds(10)) }
        let session = Session(settings: settings, transport: server.transport(), clock: clock, lifecycle: lifecycle)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            server.setFrozen(true)
            let first = Task { try await session.publish("a", to: "room") }
            try await server.waitForMessages(2)
            await clock.advance(by: .seconds(6))
            let second = Task { try await session.publish("b", to: "room") }
            try await server.waitForMessages(3)
            #expect(session.armedTimers.filter { $0.kind == .request } == [.request], "one timer for both")
            await clock.advance(by: .seconds(4))
            let firstError = await #expect(throws: SessionError.self) { try await first.value }
            #expect(firstError?.code == .timedOut)
            #expect(session.armedTimers.contains(.request), "the second has 6 s left")
            await clock.advance(by: .seconds(5))
            #expect(session.armedTimers.contains(.request), "the second has 1 s left")
            await clock.advance(by: .seconds(1))
            let secondError = await #expect(throws: SessionError.self) { try await second.value }
            #expect(secondError?.code == .timedOut)
            #expect(!session.armedTimers.contains(.request))
            #expect(session.status == .connected, "a timed-out request does not end the connection")
        }
    }

    @Test("an answered request's deadline no longer counts; the last answer disarms the timer")
    func answered() async throws {
        let server = TestServer()
        let settings = try AppSettings.testing(auto: true) { $0.requestTimeout(.seconds(10)) }
        let session = Session(settings: settings, transport: server.transport(), clock: clock, lifecycle: lifecycle)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            _ = try await session.publish("a", to: "room")
            #expect(!session.armedTimers.contains(.request))
            #expect(await clock.runUntilIdle() == .idle)
        }
    }
}

extension SessionRequestsTests {
    @Test("the socket's timers go with it: a lost connection leaves no heartbeat and no subscribe deadline armed, and none fires on the next socket")
    func socketTimersDieWithTheSocket() async throws {
        let server = TestServer()
        let settings = try AppSettings.testing(auto: true) {
            $0.requestTimeout(.seconds(10)).heartbeat(interval: .seconds(30), timeout: .seconds(5))
        }
        let session = Session(settings: settings, transport: server.transport(), clock: clock, lifecycle: lifecycle)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            server.setFrozen(true)
            let subscribing = Task { try await session.subscribe(to: "room") }
            try await server.waitForMessages(2)
            #expect(session.armedTimers.contains(.heartbeat) && session.armedTimers.contains(.request))
            server.setFrozen(false)
            server.dropAllConnections()
            let error = await #expect(throws: SessionError.self) { try await subscribing.value }
            #expect(error?.code == .connectionLost)
            #expect(session.armedTimers == [.reconnect], "only the policy's retry: \(session.armedTimers)")
            await clock.advance(by: .seconds(1))
            try await status.waitFor(.connected)
            // The next socket's heartbeat is its own; nothing of the first fires on it.
            await clock.advance(by: .seconds(10))
            #expect(session.status == .connected)
            #expect(session.armedTimers.filter { $0 == .heartbeat }.count == 1)
        }
    }
}

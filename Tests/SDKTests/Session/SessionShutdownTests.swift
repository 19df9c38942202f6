import SDK
import SDKTesting
import Testing

/// Review item 9.1: every call made after `shutdown()` ends at once with `sessionEnded`; and
/// 9.3: `connect()` made before `run()` honours the caller's cancellation.
@Suite("Session after shutdown, and before run()", .timeLimit(.minutes(1)))
struct SessionShutdownTests {
    let server = TestServer(tokens: ["test-token"])
    let clock = TestClock()

    func endedSession() async throws -> Session {
        let session = Session(settings: try .testing(), transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            try await session.connect()
        }
        return session
    }

    func expectSessionEnded(_ call: String, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("\(call) returned after shutdown")
        } catch let error as SessionError {
            #expect(error.code == .sessionEnded, "\(call): \(error)")
        } catch {
            Issue.record("\(call) threw \(error), not sessionEnded")
        }
    }

    @Test("publish, subscribe, refresh, ping, connect and addRecoveryStep after shutdown throw sessionEnded at once")
    func callsAfterShutdown() async throws {
        let session = try await endedSession()
        await expectSessionEnded("publish") { _ = try await session.publish("x", to: "r") }
        await expectSessionEnded("subscribe") { _ = try await session.subscribe(to: "r") }
        await expectSessionEnded("refresh") { _ = try await session.refresh(within: .seconds(5)) }
        await expectSessionEnded("ping") { try await session.ping() }
        await expectSessionEnded("connect") { try await session.connect() }
        await expectSessionEnded("addRecoveryStep") { try await session.addRecoveryStep("s") { _ in } }
        #expect(session.outboxCount == 0)
        #expect(session.armedTimers == [])
    }

    @Test("a session shut down before it ever ran refuses calls the same way")
    func callsAfterShutdownWithoutRun() async throws {
        let session = Session(settings: try .testing(), transport: server.transport(), clock: clock)
        await session.shutdown()
        await expectSessionEnded("publish") { _ = try await session.publish("x", to: "r") }
        await expectSessionEnded("subscribe") { _ = try await session.subscribe(to: "r") }
        await expectSessionEnded("refresh") { _ = try await session.refresh(within: .seconds(5)) }
    }

    @Test("a session whose run() task was cancelled refuses calls too")
    func callsAfterRunCancelled() async throws {
        let session = Session(settings: try .testing(), transport: server.transport(), clock: clock)
        let runner = Task { await session.run() }
        let status = StatusRecorder(session)
        try await status.waitFor(.connected)
        runner.cancel()
        await runner.value
        await expectSessionEnded("publish") { _ = try await session.publish("x", to: "r") }
        await expectSessionEnded("subscribe") { _ = try await session.subscribe(to: "r") }
    }

    @Test("a subscription held across shutdown ends with sessionEnded")
    func subscriptionEndsAtShutdown() async throws {
        let session = Session(settings: try .testing(), transport: server.transport(), clock: clock)
        let subscription = try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            return try await session.subscribe(to: "room")
        }
        await expectSessionEnded("iterating a subscription") {
            for try await _ in subscription {}
        }
    }

    @Test("connect() before run() stops waiting when its task is cancelled")
    func connectBeforeRunHonoursCancellation() async throws {
        let session = Session(settings: try .testing(auto: false), transport: server.transport(), clock: clock)
        let status = StatusRecorder(session)
        let caller = Task { try await session.connect() }
        // Once the status says connecting, connect() waits (it got there without suspending).
        try await status.waitFor(.connecting)
        caller.cancel()
        let result = await caller.result
        #expect(throws: CancellationError.self) { try result.get() }
        await session.shutdown()
    }

    @Test("a publish waiting in the outbox before run() is withdrawn when its task is cancelled")
    func publishBeforeRunHonoursCancellation() async throws {
        let session = Session(settings: try .testing(auto: false), transport: server.transport(), clock: clock)
        let caller = Task { try await session.publish("x", to: "room") }
        try await session.waitForOutboxCount(1)
        caller.cancel()
        // Bounded (a safety net that turns a hang into a failure, never a timing check): then
        // shutting down resumes every waiter, so awaiting the call cannot hang either.
        let withdrawn = await session.outboxCountReaches(0, within: .seconds(10))
        await session.shutdown()
        let result = await caller.result
        #expect(withdrawn, "the cancelled publish is withdrawn from the outbox")
        #expect(throws: CancellationError.self, "cancelled, not ended with the session") { try result.get() }
    }
}

extension Session {
    /// Returns once `count` publishes wait in the outbox; throws after 10 s of real time without
    /// it (a safety net that turns a hang into a failure with a message).
    func waitForOutboxCount(_ count: Int, file: StaticString = #fileID, line: UInt = #line) async throws {
        guard await outboxCountReaches(count, within: .seconds(10)) else {
            throw WaitTimeout(expected: "\(count) publish(es) in the outbox", found: "\(outboxCount)", patience: .seconds(10), file: "\(file)", line: line)
        }
    }

    /// Indicates that `count` publishes wait in the outbox within `limit` of real time: false
    /// (instead of a hang) when it never happens.
    func outboxCountReaches(_ count: Int, within limit: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await value in self.outboxCountUpdates where value == count { return true }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}

@Suite("Session: host calls after shutdown change nothing", .timeLimit(.minutes(1)))
struct SessionShutdownQuietTests {
    @Test("lifecycle, network, disconnect and policy calls after shutdown open nothing and keep the status")
    func quietAfterShutdown() async throws {
        let server = TestServer(tokens: ["test-token"])
        let transport = server.transport()
        let session = Session(settings: try .testing(), transport: transport, clock: TestClock())
        try await withRunningSession(session) { status in try await status.waitFor(.connected) }
        await session.setAppState(.background)
        await session.setAppState(.active)
        await session.setNetworkReachable(false)
        await session.setNetworkReachable(true)
        await session.disconnect()
        await session.credentialsChanged()
        await session.replacePolicy(AutoPolicy())
        await session.unsubscribe(from: "room")
        #expect(session.status == .disconnected(.sessionEnded))
        #expect(transport.openedConnectionCount == 1)
        #expect(session.armedTimers == [])
    }
}

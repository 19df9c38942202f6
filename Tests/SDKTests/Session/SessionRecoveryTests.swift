import SDK
import SDKTesting
import Testing

@Suite("Recovery: replay, catch-up, outbox, background refresh", .timeLimit(.minutes(1)))
struct SessionRecoveryTests {
    let clock = TestClock()
    let lifecycle = LifecycleDriver()

    func makeSession(_ server: TestServer, auto: Bool = true, _ configure: (AppSettings.Builder) -> AppSettings.Builder = { $0 }) throws -> Session {
        Session(settings: try .testing(auto: auto, configure: configure), transport: server.transport(), clock: clock, lifecycle: lifecycle)
    }

    @Test("the report after a return to the foreground: replayed steps flagged, missed messages counted")
    func reportAfterForeground() async throws {
        let server = TestServer()
        let session = try makeSession(server)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            let news = try await session.subscribe(to: "news")
            let reports = PatientReader(session.recoveryReports)
            await lifecycle.background()
            for n in 1...3 { try server.publish(JSONValue(n), to: "room") }
            await lifecycle.foreground()
            let report = try #require(await reports.next())
            #expect(report.trigger == .foreground)
            #expect(report.steps.map(\.id) == [.connected, .authenticated, .subscription("room"), .subscription("news")])
            #expect(report.steps.allSatisfy { $0.outcome == .succeeded && $0.isReplay })
            #expect(report.caughtUp == ["room": 3])
            #expect(report.gaps.isEmpty)
            #expect(report.isComplete)
            var messages = room.makeAsyncIterator()
            for n in 1...3 { #expect(try await messages.next()?.sequence == UInt64(n)) }
            withExtendedLifetime(news) {}
        }
    }

    @Test("the first connection's steps are not replays; a replay is never recorded as a new step")
    func firstConnectionIsNotAReplay() async throws {
        let server = TestServer()
        let session = try makeSession(server, auto: false)
        try await withRunningSession(session) { _ in
            let room = try await session.subscribe(to: "room")
            let reports = PatientReader(session.recoveryReports)
            try await session.connect()
            let first = try #require(await reports.next())
            #expect(first.trigger == .appConnect)
            #expect(first.steps.map(\.isReplay) == [false, false, false])
            await clock.advance(by: .seconds(60))  // a working connection: its loss is retried at once
            server.dropAllConnections()
            let second = try #require(await reports.next())
            #expect(second.steps.map(\.isReplay) == [true, true, true])
            #expect(session.recoveryJournal == [.connected, .authenticated, .subscription("room")])
            withExtendedLifetime(room) {}
        }
    }

    @Test("a gap: the server no longer had every missed message, and the report says so")
    func gap() async throws {
        let server = TestServer(retention: 2)
        let session = try makeSession(server)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            let reports = PatientReader(session.recoveryReports)
            await lifecycle.background()
            for n in 1...5 { try server.publish(JSONValue(n), to: "room") }
            await lifecycle.foreground()
            let report = try #require(await reports.next())
            #expect(report.gaps == ["room"])
            #expect(report.caughtUp == ["room": 2])
            #expect(!report.isComplete)
            var messages = room.makeAsyncIterator()
            #expect(try await messages.next()?.sequence == 4)
            #expect(try await messages.next()?.sequence == 5)
        }
    }

    @Test("a replayed subscription the server refuses is retried up to the limit, reported, and blocks nothing else")
    func failedStepIsIsolated() async throws {
        let server = TestServer()
        let session = try makeSession(server) { $0.replayAttempts(3) }
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            let news = try await session.subscribe(to: "news")
            let reports = PatientReader(session.recoveryReports)
            await lifecycle.background()
            server.setRejectingSubscriptions(to: ["room"])
            try server.publish("fresh", to: "news")
            await lifecycle.foreground()
            let report = try #require(await reports.next())
            let roomStep = try #require(report.steps.first { $0.id == .subscription("room") })
            #expect(roomStep.attempts == 3)
            guard case .failed(let reason) = roomStep.outcome else {
                Issue.record("expected the room step to fail, got \(roomStep)")
                return
            }
            #expect(reason.contains("refused"))
            #expect(report.steps.first { $0.id == .subscription("news") }?.outcome == .succeeded)
            #expect(report.caughtUp == ["news": 1])
            // The refused subscription ends with the error; the other one goes on.
            var roomMessages = room.makeAsyncIterator()
            await #expect(throws: SessionError.self) { _ = try await roomMessages.next() }
            var newsMessages = news.makeAsyncIterator()
            #expect(try await newsMessages.next()?.data == "fresh")
            #expect(session.recoveryJournal == [.connected, .authenticated, .subscription("news")])
        }
    }

    @Test("an app-defined step runs after its prerequisite, is flagged as a replay, and is retried when it fails")
    func customSteps() async throws {
        let server = TestServer()
        let session = try makeSession(server) { $0.replayAttempts(2) }
        let runs = Locked([String]())
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            try await session.addRecoveryStep("presence", after: [.subscription("room")]) { context in
                runs.withLock { $0.append("presence replay=\(context.isReplay) attempt=\(context.attempt)") }
                _ = try await context.session.publish("online", to: "room")
            }
            let failures = Locked(1)
            try await session.addRecoveryStep("flaky") { context in
                runs.withLock { $0.append("flaky replay=\(context.isReplay) attempt=\(context.attempt)") }
                if context.isReplay, failures.withLock({ count in defer { count -= 1 }; return count > 0 }) {
                    throw SessionError(.rejected, "not yet")
                }
            }
            let reports = PatientReader(session.recoveryReports)
            await clock.advance(by: .seconds(60))  // a working connection: its loss is retried at once
            server.dropAllConnections()
            let report = try #require(await reports.next())
            #expect(report.steps.map(\.id) == [.connected, .authenticated, .subscription("room"), .custom("presence"), .custom("flaky")])
            #expect(report.steps.allSatisfy { $0.outcome == .succeeded && $0.isReplay })
            #expect(report.steps.last?.attempts == 2)
            #expect(runs.withLock { $0 }.sorted() == [
                "flaky replay=false attempt=1", "flaky replay=true attempt=1", "flaky replay=true attempt=2",
                "presence replay=false attempt=1", "presence replay=true attempt=1",
            ])
            withExtendedLifetime(room) {}
        }
    }

    @Test("a step whose prerequisite is unknown is refused when added")
    func unknownPrerequisite() async throws {
        let session = try makeSession(TestServer())
        await #expect(throws: SessionError.self) {
            try await session.addRecoveryStep("x", after: [.subscription("nope")]) { _ in }
        }
    }
}

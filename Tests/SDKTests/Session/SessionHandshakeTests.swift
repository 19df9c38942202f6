import ConnectionPolicy
import Foundation
import SDK
import SDKTesting
import Testing

/// How a session recovers on Tether's protocol in fewer round trips: version 1 with the replay
/// and the outbox pipelined behind `auth`, version 2 with the subscriptions in the upgrade
/// request — and what rejected credentials do to what was sent behind them.
@Suite("Session: pipelined authentication and resume in the upgrade", .timeLimit(.minutes(1)))
struct SessionHandshakeTests {
    let clock = TestClock()
    let lifecycle = LifecycleDriver()

    func makeSession(_ server: TestServer, auto: Bool = true, token: String = "test-token") throws -> Session {
        Session(settings: try .testing(auto: auto, token: token), transport: server.transport(), clock: clock, lifecycle: lifecycle)
    }


    /// Connected, subscribed to `room`, then in the background with the socket closed.
    func subscribedThenAway(_ session: Session, _ status: StatusRecorder) async throws -> Subscription {
        try await status.waitFor(.connected)
        let room = try await session.subscribe(to: "room")
        await lifecycle.background()
        return room
    }

    func kind(_ message: ClientMessage) -> String {
        switch message {
        case .authenticate: "auth"
        case .subscribe(_, let channel, let since): "subscribe \(channel) since \(since.map(String.init) ?? "-")"
        case .publish(_, _, let data, _): "publish \(data)"
        default: "other"
        }
    }

    @Test("version 1: auth, the resubscribes and the outbox go out in one flight; connected only once auth's ok arrives")
    func oneFlight() async throws {
        let server = TestServer()
        let session = try makeSession(server)
        try await withRunningSession(session) { status in
            let room = try await subscribedThenAway(session, status)
            try await withThrowingTaskGroup(of: UInt64?.self) { group in
                for n in 1...2 {
                    group.addTask { try await session.publish(JSONValue(n), to: "room").sequence }
                    try await session.waitForOutboxCount(n)
                }
                for n in 1...3 { try server.publish(JSONValue(n * 10), to: "room") }
                let reports = PatientReader(session.recoveryReports)
                let before = server.receivedMessages.count
                server.setAnswerDelay(.milliseconds(100), on: clock)
                await lifecycle.foreground()
                await clock.settle()
                // Everything is on the server's side of the wire; nothing has been answered.
                #expect(server.receivedMessages.dropFirst(before).map(kind) == ["auth", "subscribe room since 0", "publish 1", "publish 2"])
                #expect(session.status == .connecting)
                await clock.advance(by: .milliseconds(100))
                let report = try #require(await reports.next())
                #expect(report.caughtUp == ["room": 3])
                #expect(report.outboxFlushed == 2)
                #expect(report.duration == .milliseconds(100), "one answer delay: the whole recovery is one round trip")
                var sequences: [UInt64?] = []
                for try await sequence in group { sequences.append(sequence) }
                #expect(sequences.sorted { ($0 ?? 0) < ($1 ?? 0) } == [4, 5])
            }
            var messages = room.makeAsyncIterator()
            for expected in [10, 20, 30, 1, 2] { #expect(try await messages.next()?.data == JSONValue(expected)) }
            // Every delayed answer delivered: no sleeper is left on the test clock.
            #expect(await clock.runUntilIdle() == .idle)
            // Answers to what the session sends as the test ends (a dropped subscription's
            // unsubscribe) go at once, not to a clock nobody advances.
            server.setAnswerDelay(nil, on: clock)
        }
    }

    @Test("rejected credentials: everything sent behind auth fails with that cause, nothing is applied, no retry")
    func rejectedBehindCredentials() async throws {
        let server = TestServer()
        let session = try makeSession(server)
        try await withRunningSession(session) { status in
            let room = try await subscribedThenAway(session, status)
            try await withThrowingTaskGroup(of: SessionError?.self) { group in
                for n in 1...2 {
                    group.addTask {
                        do {
                            _ = try await session.publish(JSONValue(n), to: "room")
                            return nil
                        } catch let error as SessionError {
                            return error
                        }
                    }
                    try await session.waitForOutboxCount(n)
                }
                server.setRejectingCredentials(true)
                server.setAnswerDelay(.milliseconds(50), on: clock)
                let before = server.receivedMessages.count
                await lifecycle.foreground()
                await clock.settle()
                #expect(server.receivedMessages.dropFirst(before).map(kind) == ["auth", "subscribe room since 0", "publish 1", "publish 2"], "sent in one flight")
                await clock.advance(by: .milliseconds(50))
                for try await error in group {
                    #expect(error?.code == .rejected)
                    #expect(error?.reason?.code == .credentialsRejected)
                }
            }
            #expect(server.latestSequence(of: "room") == 0, "nothing behind the rejected auth was applied")
            try await status.waitFor(.disconnected(DisconnectReason(.credentialsRejected, detail: "credentials rejected")))
            #expect(await clock.runUntilIdle() == .idle, "no retry")
            #expect(server.acceptedConnectionCount == 2)
            withExtendedLifetime(room) {}
        }
    }

    @Test("a subscribe made while the replay is pipelined behind auth goes out on that connection")
    func subscribeWhilePipelining() async throws {
        let server = TestServer()
        let session = try makeSession(server)
        server.setAnswerDelay(.milliseconds(100), on: clock)
        try await withRunningSession(session) { _ in
            await clock.settle()
            #expect(session.status == .connecting)
            let subscribing = Task { try await session.subscribe(to: "late") }
            try await server.waitForMessages(2)
            #expect(server.receivedMessages.map(kind) == ["auth", "subscribe late since -"])
            await clock.advance(by: .milliseconds(100))
            let late = try await subscribing.value
            try server.publish("hi", to: "late")
            var messages = late.makeAsyncIterator()
            #expect(try await messages.next()?.data == "hi")
            #expect(await clock.runUntilIdle() == .idle)
            // Answers to what the session sends as the test ends (a dropped subscription's
            // unsubscribe) go at once, not to a clock nobody advances.
            server.setAnswerDelay(nil, on: clock)
        }
    }

    @Test("a subscribe made while auth is unanswered returns at once and survives that attempt failing (issue 28's repro)")
    func subscribeWhileAuthenticatingSurvivesTheAttempt() async throws {
        let server = TestServer()
        let session = Session(
            settings: try .testing(auto: true, token: "test-token", configure: { $0.connectTimeout(.seconds(10)) }),
            transport: server.transport(), clock: clock, lifecycle: lifecycle
        )
        server.setAnswerDelay(.seconds(60), on: clock)
        try await withRunningSession(session) { _ in
            try await server.waitForMessages(1)
            #expect(session.status == .connecting)
            // Not connected: the doc promises it returns at once, the subscription starting
            // with the next connection.
            let subscribing = Task { try await session.subscribe(to: "room") }
            try await server.waitForMessages(2)
            server.setAnswerDelay(nil, on: clock)
            await clock.advance(by: .seconds(30))
            let room = try await subscribing.value
            #expect(session.status == .connected)
            #expect(server.subscriberCount(of: "room") == 1, "the retry's replay subscribed it")
            try server.publish("hi", to: "room")
            var messages = room.makeAsyncIterator()
            #expect(try await messages.next()?.data == "hi")
        }
    }

    @Test("an app-defined recovery step waits for auth's ok; the resubscribes do not")
    func recoveryStepWaitsForAuthentication() async throws {
        let server = TestServer()
        let session = try makeSession(server)
        let (runs, runSink) = AsyncStream<ConnectionStatus>.makeStream()
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            // The context's session: capturing `session` here would be a retain cycle.
            try await session.addRecoveryStep("sync") { context in runSink.yield(context.session.status) }
            var seen = runs.makeAsyncIterator()
            #expect(await seen.next() == .connected)
            await lifecycle.background()
            server.setAnswerDelay(.milliseconds(100), on: clock)
            let before = server.receivedMessages.count
            await lifecycle.foreground()
            await clock.settle()
            #expect(server.receivedMessages.dropFirst(before).map(kind) == ["auth", "subscribe room since 0"])
            await clock.advance(by: .milliseconds(100))
            #expect(await seen.next() == .connected, "the step ran once connected")
            #expect(await clock.runUntilIdle() == .idle)
            // Answers to what the session sends as the test ends (a dropped subscription's
            // unsubscribe) go at once, not to a clock nobody advances.
            server.setAnswerDelay(nil, on: clock)
            withExtendedLifetime(room) {}
        }
    }

    @Test("versions 2 and 3: no auth and no subscribe on the wire; the upgrade carried the token and every since (by name; by the kept set); the catch-up counted", arguments: [2, 3])
    func resumeInUpgrade(version: Int) async throws {
        let server = TestServer(speaksVersion2: true)
        server.setAcceptsVersion3(version == 3)
        let transport = server.transport()
        let session = Session(settings: try .testing(auto: true), transport: transport, clock: clock, lifecycle: lifecycle)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            let news = try await session.subscribe(to: "news")
            await lifecycle.background()
            for n in 1...3 { try server.publish(JSONValue(n), to: "room") }
            let reports = PatientReader(session.recoveryReports)
            let before = server.receivedMessages.count
            server.setAnswerDelay(.milliseconds(100), on: clock)
            await lifecycle.foreground()
            await clock.advance(by: .milliseconds(100))
            let report = try #require(await reports.next())
            #expect(report.caughtUp == ["room": 3])
            #expect(report.isComplete)
            #expect(report.duration == .milliseconds(100), "the answers to the upgrade itself: one round trip")
            #expect(server.receivedMessages.dropFirst(before).isEmpty, "nothing to send: \(server.receivedMessages.dropFirst(before))")
            #expect(server.receivedMessages.allSatisfy { if case .authenticate = $0 { false } else { true } })
            let headers = try #require(transport.requestedHeaders.last)
            #expect(headers["Authorization"] == "Bearer test-token")
            if version == 2 {
                #expect(headers["Tether-Resume"] == "1;room;0,2;news;0")
            } else {
                #expect(headers["Tether-Resume"] == nil)
                let set = try TetherResumeSet.Request(headerValue: try #require(headers["Tether-Resume-Set"]))
                #expect(set.positions(for: [.init(channel: "news", base: 0), .init(channel: "room", base: 0)]) == [.since(0), .since(0)])
            }
            #expect(transport.requestedURLs.allSatisfy { !$0.absoluteString.contains("test-token") })
            var messages = room.makeAsyncIterator()
            for n in 1...3 { #expect(try await messages.next()?.sequence == UInt64(n)) }
            #expect(await clock.runUntilIdle() == .idle)
            // Answers to what the session sends as the test ends (a dropped subscription's
            // unsubscribe) go at once, not to a clock nobody advances.
            server.setAnswerDelay(nil, on: clock)
            withExtendedLifetime(news) {}
        }
    }

    @Test("version 2, rejected at the upgrade (401): typed, not retried, the outbox fails with that cause, no socket")
    func rejectedAtUpgrade() async throws {
        let server = TestServer(tokens: ["other"], speaksVersion2: true)
        let transport = server.transport()
        let session = Session(settings: try .testing(auto: false), transport: transport, clock: clock, lifecycle: lifecycle)
        try await withRunningSession(session) { status in
            let published = Task { try await session.publish("x", to: "room") }
            try await session.waitForOutboxCount(1)
            await #expect(throws: SessionError.self) { try await session.connect() }
            let error = await #expect(throws: SessionError.self) { try await published.value }
            #expect(error?.code == .rejected)
            #expect(error?.reason?.code == .credentialsRejected)
            #expect(session.status.reason?.code == .credentialsRejected)
            #expect(transport.requestedURLs.count == 1)
            #expect(server.acceptedConnectionCount == 0)
            #expect(server.receivedMessages.isEmpty)
        }
    }
}

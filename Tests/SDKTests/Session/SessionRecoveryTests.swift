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
            var reports = session.recoveryReports.makeAsyncIterator()
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
            var reports = session.recoveryReports.makeAsyncIterator()
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
            var reports = session.recoveryReports.makeAsyncIterator()
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
            var reports = session.recoveryReports.makeAsyncIterator()
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
            var reports = session.recoveryReports.makeAsyncIterator()
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

    @Test("publishes made while away wait in the outbox and go out in order after the replay, each completing once")
    func outboxOrder() async throws {
        let server = TestServer()
        let session = try makeSession(server)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            await lifecycle.background()
            try await withThrowingTaskGroup(of: (Int, UInt64).self) { group in
                for n in 1...5 {
                    group.addTask { (n, try await session.publish(JSONValue(n), to: "room").sequence ?? 0) }
                    await session.waitForOutboxCount(n)
                }
                var reports = session.recoveryReports.makeAsyncIterator()
                await lifecycle.foreground()
                var results: [Int: UInt64] = [:]
                for try await (n, sequence) in group { results[n] = sequence }
                #expect(results == [1: 1, 2: 2, 3: 3, 4: 4, 5: 5])
                let report = try #require(await reports.next())
                #expect(report.outboxFlushed == 5)
            }
            // The replay (subscribe) went out before the outbox.
            let kinds = server.receivedMessages.suffix(7).map { message -> String in
                switch message {
                case .authenticate: "auth"
                case .subscribe: "subscribe"
                case .publish: "publish"
                default: "other"
                }
            }
            #expect(kinds == ["auth", "subscribe", "publish", "publish", "publish", "publish", "publish"])
            var messages = room.makeAsyncIterator()
            for n in 1...5 { #expect(try await messages.next()?.data == JSONValue(n)) }
        }
    }

    @Test("a publish made during the replay queues behind the outbox; a recovery step's own publish does not wait")
    func publishDuringReplayKeepsOrder() async throws {
        let server = TestServer()
        let session = try makeSession(server)
        let (started, startedSink) = AsyncStream<Void>.makeStream()
        let (release, releaseSink) = AsyncStream<Void>.makeStream()
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            try await session.addRecoveryStep("hold", after: [.subscription("room")]) { context in
                guard context.isReplay else { return }
                _ = try await context.session.publish("step", to: "room")
                startedSink.yield()
                for await _ in release { return }
            }
            await lifecycle.background()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 1...3 {
                    group.addTask { _ = try await session.publish(JSONValue(n), to: "room") }
                    await session.waitForOutboxCount(n)
                }
                await lifecycle.foreground()
                for await _ in started { break }
                // Connected, the replay held by the step, three publishes waiting: a fourth queues.
                group.addTask { _ = try await session.publish(.number(4), to: "room") }
                await session.waitForOutboxCount(4)
                releaseSink.yield()
                try await group.waitForAll()
            }
            var messages = room.makeAsyncIterator()
            var received: [JSONValue] = []
            for _ in 1...5 { received.append(try #require(await messages.next()).data) }
            #expect(received == ["step", .number(1), .number(2), .number(3), .number(4)])
        }
    }

    @Test("cancelling a publish that waits in the outbox withdraws it: CancellationError, never sent")
    func outboxCancellation() async throws {
        let server = TestServer()
        let session = try makeSession(server)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            await lifecycle.background()
            let first = Task { try await session.publish(.number(1), to: "room") }
            await session.waitForOutboxCount(1)
            let second = Task { try await session.publish(.number(2), to: "room") }
            await session.waitForOutboxCount(2)
            second.cancel()
            await session.waitForOutboxCount(1)
            await #expect(throws: CancellationError.self) { try await second.value }
            // A publish from a task cancelled before it is queued never enters the outbox.
            let early = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await session.publish(.number(0), to: "room")
            }
            await #expect(throws: CancellationError.self) { try await early.value }
            #expect(session.outboxCount == 1)
            let third = Task { try await session.publish(.number(3), to: "room") }
            await session.waitForOutboxCount(2)
            await lifecycle.foreground()
            #expect(try await first.value.sequence == 1)
            #expect(try await third.value.sequence == 2)
            let published = server.receivedMessages.compactMap { message -> JSONValue? in
                if case .publish(_, _, let data, _) = message { data } else { nil }
            }
            #expect(published == [.number(1), .number(3)])
        }
    }

    @Test("a full outbox throws outboxFull; the queued ones still complete")
    func outboxBound() async throws {
        let server = TestServer()
        let session = try makeSession(server) { $0.outboxLimit(2) }
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            await lifecycle.background()
            try await withThrowingTaskGroup(of: UInt64.self) { group in
                group.addTask { try await session.publish("a", to: "room").sequence ?? 0 }
                await session.waitForOutboxCount(1)
                group.addTask { try await session.publish("b", to: "room").sequence ?? 0 }
                await session.waitForOutboxCount(2)
                do {
                    _ = try await session.publish("c", to: "room")
                    Issue.record("a third publish fit into an outbox of two")
                } catch let error as SessionError {
                    #expect(error.code == .outboxFull)
                }
                await lifecycle.foreground()
                var sequences: [UInt64] = []
                for try await sequence in group { sequences.append(sequence) }
                #expect(sequences.sorted() == [1, 2])
            }
        }
    }

    @Test("an outbox entry times out in the foreground; in the background no timer runs for it")
    func outboxTimeout() async throws {
        let server = TestServer()
        server.setRefusingConnections(true)
        let session = try makeSession(server, auto: false) { $0.outboxTimeout(.seconds(10)) }
        try await withRunningSession(session) { _ in
            try await confirmation("timed out") { timedOut in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        do {
                            _ = try await session.publish("x", to: "room")
                        } catch let error as SessionError where error.code == .timedOut {
                            timedOut()
                        }
                    }
                    await session.waitForOutboxCount(1)
                    #expect(session.armedTimers == [.outbox])
                    await lifecycle.background()
                    #expect(session.armedTimers == [])
                    await clock.advance(by: .seconds(11))
                    #expect(session.outboxCount == 1, "no timer in the background")
                    await lifecycle.foreground()
                    try await group.waitForAll()
                }
            }
        }
    }

    @Test("shutdown fails what waits in the outbox with sessionEnded")
    func outboxSessionEnd() async throws {
        let session = try makeSession(TestServer(), auto: false)
        let outcome = Locked<SessionError.Code?>(nil)
        try await withRunningSession(session) { _ in
            let task = Task {
                do {
                    _ = try await session.publish("x", to: "room")
                } catch {
                    outcome.withLock { $0 = (error as? SessionError)?.code }
                }
            }
            await session.waitForOutboxCount(1)
            await session.shutdown()
            await task.value
        }
        #expect(outcome.withLock { $0 } == .sessionEnded)
    }

    @Test("background refresh: connects, catches up, flushes, lets go; the policy's state is untouched")
    func backgroundRefresh() async throws {
        let server = TestServer()
        let session = try makeSession(server)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            await lifecycle.background()
            await server.waitForOpenConnections(0)
            try server.publish("missed", to: "room")
            try await withThrowingTaskGroup(of: UInt64.self) { group in
                group.addTask { try await session.publish("queued", to: "room").sequence ?? 0 }
                await session.waitForOutboxCount(1)
                let report = try await session.refresh(within: .seconds(20))
                #expect(report.trigger == .backgroundRefresh)
                #expect(report.caughtUp == ["room": 1])
                #expect(report.outboxFlushed == 1)
                #expect(try await group.next() == 2)
            }
            #expect(session.status == .disconnected(.appBackgrounded))
            await server.waitForOpenConnections(0)
            #expect(session.armedTimers == [])
            var messages = room.makeAsyncIterator()
            #expect(try await messages.next()?.data == "missed")
            // The echo of our own publish came after the refresh let go: caught up on return.
            await lifecycle.foreground()
            try await status.waitFor(.connected)
            #expect(try await messages.next()?.data == "queued")
        }
    }

    @Test("a background refresh whose attempt cannot connect fails at once with connectionLost; the policy hears nothing")
    func backgroundRefreshCannotConnect() async throws {
        let server = TestServer()
        let session = try makeSession(server, auto: false)
        server.setRefusingConnections(true)
        try await withRunningSession(session) { _ in
            do {
                _ = try await session.refresh(within: .seconds(20))
                Issue.record("the refresh returned")
            } catch let error as SessionError {
                #expect(error.code == .connectionLost, "\(error)")
            }
            #expect(session.status == .disconnected(.notStarted))
            #expect(session.armedTimers == [], "no retry, no deadline left behind")
        }
    }

    @Test("background refresh past its deadline throws timedOut and lets go of its connection")
    func backgroundRefreshDeadline() async throws {
        let server = TestServer()
        let session = try makeSession(server, auto: false)
        server.setFrozen(true)
        try await withRunningSession(session) { _ in
            try await confirmation("timed out") { timedOut in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        do {
                            _ = try await session.refresh(within: .seconds(5))
                        } catch let error as SessionError where error.code == .timedOut {
                            timedOut()
                        }
                    }
                    await server.waitForReceivedMessages(1)
                    await clock.advance(by: .seconds(5))
                    try await group.waitForAll()
                }
            }
            #expect(session.status == .disconnected(.notStarted))
            await server.waitForOpenConnections(0)
            #expect(session.armedTimers == [])
        }
    }
}

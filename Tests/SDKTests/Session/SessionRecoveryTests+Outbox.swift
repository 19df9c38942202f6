import SDK
import SDKTesting
import Testing

extension SessionRecoveryTests {
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
                    try await session.waitForOutboxCount(n)
                }
                let reports = PatientReader(session.recoveryReports)
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
                    try await session.waitForOutboxCount(n)
                }
                await lifecycle.foreground()
                for await _ in started { break }
                // Connected, the replay held by the step, three publishes waiting: a fourth queues.
                group.addTask { _ = try await session.publish(.number(4), to: "room") }
                try await session.waitForOutboxCount(4)
                releaseSink.yield()
                try await group.waitForAll()
            }
            var messages = room.makeAsyncIterator()
            var received: [JSONValue] = []
            for _ in 1...5 { received.append(try #require(await messages.next()).data) }
            #expect(received == ["step", .number(1), .number(2), .number(3), .number(4)])
        }
    }

    @Test("the outbox waits for an app recovery step that is still running: nothing of it is sent until the step ends")
    func outboxWaitsForRunningStep() async throws {
        let server = TestServer()
        let session = try makeSession(server)
        let (started, startedSink) = AsyncStream<Void>.makeStream()
        let (release, releaseSink) = AsyncStream<Void>.makeStream()
        func publishes() -> Int { server.receivedMessages.filter { if case .publish = $0 { true } else { false } }.count }
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            try await session.addRecoveryStep("hold", after: [.subscription("room")]) { context in
                guard context.isReplay else { return }
                startedSink.yield()  // blocks before anything of its own is sent
                for await _ in release { return }
            }
            await lifecycle.background()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 1...2 {
                    group.addTask { _ = try await session.publish(JSONValue(n), to: "room") }
                    try await session.waitForOutboxCount(n)
                }
                await lifecycle.foreground()
                for await _ in started { break }
                // Connected, the step running: a publish the app makes now queues behind the two,
                // and none of them goes out (a flush now would empty the outbox at once).
                group.addTask { _ = try await session.publish(.number(3), to: "room") }
                let queued = await session.outboxCountReaches(3, within: .seconds(10))
                #expect(queued && publishes() == 0 && session.outboxCount == 3, "the step runs: the outbox waits (\(publishes()) sent, \(session.outboxCount) waiting)")
                releaseSink.yield()
                try await group.waitForAll()
            }
            #expect(publishes() == 3)
            _ = room
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
            try await session.waitForOutboxCount(1)
            let second = Task { try await session.publish(.number(2), to: "room") }
            try await session.waitForOutboxCount(2)
            second.cancel()
            try await session.waitForOutboxCount(1)
            await #expect(throws: CancellationError.self) { try await second.value }
            // A publish from a task cancelled before it is queued never enters the outbox.
            let early = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await session.publish(.number(0), to: "room")
            }
            await #expect(throws: CancellationError.self) { try await early.value }
            #expect(session.outboxCount == 1)
            let third = Task { try await session.publish(.number(3), to: "room") }
            try await session.waitForOutboxCount(2)
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
                try await session.waitForOutboxCount(1)
                group.addTask { try await session.publish("b", to: "room").sequence ?? 0 }
                try await session.waitForOutboxCount(2)
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
                    try await session.waitForOutboxCount(1)
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
            try await session.waitForOutboxCount(1)
            await session.shutdown()
            await task.value
        }
        #expect(outcome.withLock { $0 } == .sessionEnded)
    }
}

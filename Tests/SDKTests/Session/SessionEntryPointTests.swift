import ConnectionPolicy
import SDK
import SDKTesting
import Testing

/// The README's entry points that no other test reaches: `Session.start`, CometChat's callback
/// shapes (their error paths included), the token provider across ordinary reconnects, and the
/// streams a session hands out ending at shutdown.
@Suite("Session: entry points", .timeLimit(.minutes(1)))
struct SessionEntryPointTests {
    let server = TestServer()
    let clock = TestClock()
    let lifecycle = LifecycleDriver()

    @Test("Session.start runs the session by itself: it connects, serves, and ends at shutdown()")
    func startRunsItself() async throws {
        let session = await Session.start(settings: try .testing(), transport: server.transport(), clock: clock, lifecycle: lifecycle)
        let status = StatusRecorder(session)
        try await status.waitFor(.connected)
        let room = try await session.subscribe(to: "room")
        #expect(try await session.publish(["n": 1], to: "room") == PublishReceipt(.acknowledged, sequence: 1))
        await lifecycle.background()
        #expect(session.status == .disconnected(.appBackgrounded))
        await lifecycle.foreground()
        try await status.waitFor(.connected, after: status.mark())
        await session.shutdown()
        #expect(session.status == .disconnected(.sessionEnded))
        try await server.waitForOpenConnections(0)
        #expect(server.acceptedConnectionCount == 2)
        await #expect(throws: SessionError.self) { try await session.connect() }
        _ = room
    }

    @Test("callbacks on Session: onSuccess when the call succeeds, onError with the typed error when it fails")
    func sessionCallbacks() async throws {
        let session = Session(settings: try .testing(auto: false), transport: server.transport(), clock: clock, lifecycle: lifecycle)
        let (outcomes, sink) = AsyncStream<String>.makeStream()
        var next = outcomes.makeAsyncIterator()
        try await withRunningSession(session) { _ in
            session.ping(onSuccess: { sink.yield("ping ok") }, onError: { sink.yield("ping error \(($0 as? SessionError)?.code.description ?? "untyped")") })
            #expect(await next.next() == "ping error notConnected")
            session.connect(onSuccess: { sink.yield("connected") }, onError: { sink.yield("connect error \($0)") })
            #expect(await next.next() == "connected")
            session.ping(onSuccess: { sink.yield("ping ok") }, onError: { sink.yield("ping error \($0)") })
            #expect(await next.next() == "ping ok")
            session.disconnect(onSuccess: { sink.yield("disconnected") })
            #expect(await next.next() == "disconnected")
            #expect(session.status == .disconnected(.appRequested))
            server.setRejectingCredentials(true)
            session.connect(onSuccess: { sink.yield("connected") }, onError: { sink.yield("connect error \(($0 as? SessionError)?.code.description ?? "untyped")") })
            #expect(await next.next() == "connect error disconnected")
        }
    }

    @Test("callbacks on ConnectionController: ping's onError carries the client's error; connect's onError after shutdown")
    func controllerCallbacks() async throws {
        struct PingFailed: Error, Equatable {}
        let client = TestConnection()
        let controller = ConnectionController(
            connection: client, policy: ManualPolicy(.init(backgroundTimeout: .seconds(30))), clock: clock, lifecycle: lifecycle,
            ping: { throw PingFailed() }, logger: .silent
        )
        let (outcomes, sink) = AsyncStream<String>.makeStream()
        var next = outcomes.makeAsyncIterator()
        try await withRunningController(controller) { _ in
            controller.connect(onSuccess: { sink.yield("connected") }, onError: { sink.yield("connect error \($0)") })
            #expect(await next.next() == "connected")
            controller.ping(onSuccess: { sink.yield("ping ok") }, onError: { sink.yield($0 is PingFailed ? "ping error PingFailed" : "ping error \($0)") })
            #expect(await next.next() == "ping error PingFailed")
        }
        controller.connect(onSuccess: { sink.yield("connected") }, onError: { sink.yield("connect error \(($0 as? SessionError)?.code.description ?? "untyped")") })
        #expect(await next.next() == "connect error sessionEnded")
    }

    @Test("the token provider is asked once for every attempt, across ordinary reconnects")
    func tokenPerAttempt() async throws {
        let asked = Locked(0)
        let settings = try AppSettings.testing {
            $0.tokenProvider { () async throws -> String in
                asked.withLock { $0 += 1 }
                return "test-token"
            }
        }
        let session = Session(settings: settings, transport: server.transport(), clock: clock, lifecycle: lifecycle)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            #expect(asked.withLock { $0 } == 1)
            for round in 2...4 {
                await clock.advance(by: .seconds(10))  // a working connection: its loss is retried at once
                server.dropAllConnections()
                try await status.waitFor(.connected, after: status.mark())
                await clock.settle()
                #expect(asked.withLock { $0 } == round, "one token per attempt")
                #expect(server.acceptedConnectionCount == round)
            }
            await lifecycle.background()
            await lifecycle.foreground()
            try await status.waitFor(.connected, after: status.mark())
            #expect(asked.withLock { $0 } == 5)
        }
    }

    @Test("every stream the session handed out ends at shutdown: status, recovery reports, outbox counts, subscriptions")
    func streamsEndAtShutdown() async throws {
        let session = Session(settings: try .testing(), transport: server.transport(), clock: clock, lifecycle: lifecycle)
        var statuses = session.statusUpdates.makeAsyncIterator()
        let reports = PatientReader(session.recoveryReports)
        var counts = session.outboxCountUpdates.makeAsyncIterator()
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            var messages = try await session.subscribe(to: "room").makeAsyncIterator()
            await session.shutdown()
            await #expect(throws: SessionError.self) { _ = try await messages.next() }
        }
        var lastStatus: ConnectionStatus?
        while let next = await statuses.next() { lastStatus = next }
        #expect(lastStatus == .disconnected(.sessionEnded))
        while await reports.next() != nil {}
        var lastCount: Int?
        while let next = await counts.next() { lastCount = next }
        #expect(lastCount == 0)
    }
}

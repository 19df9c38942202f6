import ConnectionPolicy
import SDK
import SDKTesting
import Testing

/// Issue 11: the session holds background time exactly while a policy keeps a connection open
/// (or opening) in the background, and until the close frame of one closed there is written;
/// when the OS takes it back first, the connection closes in order with its own reason. On the
/// test clock, with the scriptable `TestBackgroundTime`.
@Suite("Session: background execution time", .timeLimit(.minutes(1)))
struct SessionBackgroundTimeTests {
    let server = TestServer()
    let clock = TestClock()
    let lifecycle = LifecycleDriver()
    let time = TestBackgroundTime()

    func makeSession(auto: Bool, _ configure: (AppSettings.Builder) -> AppSettings.Builder = { $0 }) throws -> Session {
        Session(settings: try .testing(auto: auto, configure: configure), transport: server.transport(), clock: clock, lifecycle: lifecycle, backgroundTime: time)
    }

    /// Every begin matched by one end, nothing left held.
    func expectBalanced(_ comment: Comment? = nil) async {
        #expect(await time.waitForHeld(0, timeout: .seconds(10)), comment)
        #expect(time.begunCount == time.endedCount && time.doubleEndCount == 0, comment)
    }

    @Test("Manual: held through the background window; a ping at 20 s keeps it; the watchdog releases it with the close")
    func manualWindow() async throws {
        let session = try makeSession(auto: false)
        try await withRunningSession(session) { status in
            try await session.connect()
            #expect(time.heldCount == 0, "nothing is held in the foreground")
            await lifecycle.background()
            #expect(time.heldCount == 1)
            #expect(time.heldNames == ["Tether realtime connection"])
            await clock.advance(by: .seconds(20))
            try await session.ping()
            await clock.advance(by: .seconds(20))
            #expect(session.status == .connected)
            #expect(time.heldCount == 1 && time.begunCount == 1, "one grant for the whole window")
            await clock.advance(by: .seconds(10))
            try await status.waitFor(.disconnected(.watchdogExpired))
            await expectBalanced()
        }
        #expect(time.begunCount == 1)
    }

    @Test("Manual: the OS takes the time back at 25 s: closed in order with its own reason, released, not reconnected")
    func expiration() async throws {
        let session = try makeSession(auto: false)
        try await withRunningSession(session) { status in
            try await session.connect()
            await lifecycle.background()
            await clock.advance(by: .seconds(25))
            time.expireAll()
            try await status.waitFor(.disconnected(.backgroundTimeExpired))
            try await server.waitForOpenConnections(0)
            await expectBalanced()
            await clock.advance(by: .seconds(60))
            #expect(session.status == .disconnected(.backgroundTimeExpired), "Manual's rule for a loss in the background: only connect() reconnects")
            #expect(session.armedTimers.isEmpty)
            await lifecycle.foreground()
            #expect(session.status == .disconnected(.backgroundTimeExpired))
        }
    }

    @Test("Auto: held only until the close frame is written, then released")
    func autoCloseFlush() async throws {
        let gate = OneShot()
        let transport = ScriptedTransport(subprotocol: "graphql-transport-ws", closeGate: gate)
        let settings = try AppSettings.testing { $0.serverProtocol(.graphQLTransportWS()) }
        let session = Session(settings: settings, transport: transport, clock: clock, lifecycle: lifecycle, backgroundTime: time)
        let log = ScriptedLog(transport)
        try await withRunningSession(session) { status in
            _ = await log.nextSent()
            transport.push(#"{"type":"connection_ack"}"#)
            try await status.waitFor(.connected)
            await lifecycle.background()
            #expect(session.status == .disconnected(.appBackgrounded))
            #expect(time.heldCount == 1, "the close frame is not written yet")
            gate.fire()
            #expect(await log.next() == .closed(.normal))
            await expectBalanced()
        }
    }

    @Test("Auto with a 10 s grace: held for the grace, released with the close")
    func autoGrace() async throws {
        let session = try makeSession(auto: true) { $0.backgroundGrace(.seconds(10)) }
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            await lifecycle.background()
            await clock.advance(by: .milliseconds(9_999))
            #expect(session.status == .connected && time.heldCount == 1)
            await clock.advance(by: .milliseconds(1))
            try await status.waitFor(.disconnected(.appBackgrounded))
            await expectBalanced()
        }
    }

    @Test("back in the foreground during the grace: released at once, the connection kept")
    func foregroundDuringGrace() async throws {
        let session = try makeSession(auto: true) { $0.backgroundGrace(.seconds(10)) }
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            await lifecycle.background()
            #expect(time.heldCount == 1)
            await clock.advance(by: .seconds(5))
            await lifecycle.foreground()
            #expect(time.heldCount == 0)
            #expect(session.status == .connected)
            #expect(server.openConnectionCount == 1)
            await expectBalanced()
        }
    }

    @Test("a background refresh holds the time for its duration")
    func refresh() async throws {
        let session = try makeSession(auto: true)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            await lifecycle.background()
            try await server.waitForOpenConnections(0)
            await expectBalanced("released once Auto's close was written")
            let begunBefore = time.begunCount
            let refreshing = Task { try await session.refresh(within: .seconds(25)) }
            try await server.waitForOpenConnections(1)
            #expect(time.heldCount == 1, "held while the refresh's connection is open")
            _ = try await refreshing.value
            try await server.waitForOpenConnections(0)
            await expectBalanced()
            #expect(time.begunCount == begunBefore + 1)
        }
    }

    @Test("shutdown in the background releases it")
    func shutdownInBackground() async throws {
        let session = try makeSession(auto: false)
        try await withRunningSession(session) { _ in
            try await session.connect()
            await lifecycle.background()
            #expect(time.heldCount == 1)
        }
        #expect(time.heldCount == 0)
        #expect(time.begunCount == time.endedCount && time.doubleEndCount == 0)
    }

    @Test("no time to be had (the budget is spent): the connection opened in the background closes at once, typed")
    func noTimeLeft() async throws {
        time.setRefusingTime(true)
        let session = try makeSession(auto: false)
        try await withRunningSession(session) { status in
            await lifecycle.background()
            try? await session.connect()
            try await status.waitFor { if case .disconnected(let reason) = $0 { reason.code == .backgroundTimeExpired } else { false } }
            await expectBalanced()
        }
    }
}

import SDK
import SDKTesting
import Testing

/// The recorder's waits: `waitFor` reads on from where it is (so it can match an earlier,
/// unread status), a mark or `waitForNext` only matches what comes after, and `drain` reads
/// what is there without waiting.
@Suite("StatusRecorder", .timeLimit(.minutes(1)))
struct StatusRecorderTests {
    let clock = TestClock()
    let server = TestServer()

    static func isReconnecting(_ status: ConnectionStatus) -> Bool {
        if case .reconnecting = status { true } else { false }
    }

    /// Drops the connection and lets the session reconnect (its retry waits on the test clock).
    func dropAndReconnect(_ status: StatusRecorder) async throws {
        server.dropAllConnections()
        try await status.waitFor(Self.isReconnecting)
        await clock.advance(by: .seconds(30))
    }

    @Test("waitFor matches the first connection's unread .connected at once; waitFor(after: mark) waits for the reconnection")
    func markedWait() async throws {
        let session = Session(settings: try .testing(), transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let vacuous = StatusRecorder(session), marked = StatusRecorder(session)
            let mark = marked.mark()
            try await dropAndReconnect(status)
            #expect(try await vacuous.waitFor(.connected) == [.connected], "the replayed status it began with: a wrong test would pass here")
            let passed = try await marked.waitFor(.connected, after: mark)
            #expect(passed.first.map(Self.isReconnecting) == true, "\(passed)")
            #expect(passed.last == .connected)
        }
    }

    @Test("drain reads what was published before it, without waiting; next() then returns only later statuses")
    func drain() async throws {
        let session = Session(settings: try .testing(), transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            try await session.connect()
            let drained = await status.drain()
            #expect(drained == [.disconnected(.notStarted), .connecting, .connected])
            #expect(await status.drain().isEmpty, "nothing new: returns at once")
            server.dropAllConnections()
            #expect(try await status.next().map(Self.isReconnecting) == true)
        }
    }

    @Test("waitForNext ignores a matching status published before the call")
    func waitForNext() async throws {
        let session = Session(settings: try .testing(), transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let recorder = StatusRecorder(session)  // its first, unread status: .connected
            let started = AsyncStream<Void>.makeStream()
            await recorder.onWaitStarted { started.continuation.yield() }
            async let next = recorder.waitForNext(.connected)
            var waiting = started.stream.makeAsyncIterator()
            await waiting.next()  // the wait has taken its mark: reconnect only now
            try await dropAndReconnect(status)
            let passed = try await next
            #expect(passed.first.map(Self.isReconnecting) == true, "\(passed)")
        }
    }

    @Test("statusUpdates replays the current status; recoveryReports does not replay the last report")
    func replaySemantics() async throws {
        let session = Session(settings: try .testing(), transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            var reports = session.recoveryReports.makeAsyncIterator()
            try await status.waitFor(.connected)
            _ = await reports.next()
            var late = session.recoveryReports.makeAsyncIterator()
            var statuses = session.statusUpdates.makeAsyncIterator()
            #expect(await statuses.next() == .connected, "the current status comes first")
            #expect(session.lastRecoveryReport != nil)
            server.dropAllConnections()
            try await status.waitFor(Self.isReconnecting)
            await clock.advance(by: .seconds(30))
            #expect(await late.next()?.trigger == .reconnect, "the first report it sees is the next one, not the launch's")
        }
    }
}

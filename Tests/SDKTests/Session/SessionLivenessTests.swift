import SDK
import SDKTesting
import Testing

@Suite("Liveness, credentials and logging", .timeLimit(.minutes(1)))
struct SessionLivenessTests {
    let clock = TestClock()
    let lifecycle = LifecycleDriver()

    @Test("the heartbeat finds a half-open connection (the server stops answering) and reconnects")
    func halfOpen() async throws {
        let server = TestServer()
        let log = LogWaiter()
        let session = Session(
            settings: try .testing { $0.heartbeat(interval: .seconds(25), timeout: .seconds(10)).logging(minimumLevel: .debug, log.record) },
            transport: server.transport(), clock: clock, lifecycle: lifecycle
        )
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            #expect(session.armedTimers == [.heartbeat])
            await clock.advance(by: .seconds(25))  // a ping, answered: the next one is armed
            try await log.waitFor(count: 2) { $0.message.hasPrefix("heartbeat armed") }
            server.setFrozen(true)
            await clock.advance(by: .seconds(25))  // a ping, unanswered
            try await server.waitForMessages(3)
            await clock.advance(by: .seconds(9))
            #expect(session.status == .connected)
            await clock.advance(by: .seconds(1))
            let seen = try await status.waitFor { $0.reason?.detail?.contains("half-open") == true }
            #expect(seen.last?.reason?.code == .networkLost)
        }
    }

    @Test("no heartbeat runs in the background; the app's ping() is the heartbeat there (Manual)")
    func noHeartbeatInBackground() async throws {
        let server = TestServer()
        let session = Session(
            settings: try .testing(auto: false) { $0.heartbeat(interval: .seconds(25), timeout: .seconds(10)) },
            transport: server.transport(), clock: clock, lifecycle: lifecycle
        )
        try await withRunningSession(session) { status in
            try await session.connect()
            await lifecycle.background()
            #expect(session.armedTimers == [.watchdog])
            server.setFrozen(true)
            await #expect(throws: SessionError.self) {
                async let ping: Void = session.ping()
                try await server.waitForMessages(2)
                await clock.advance(by: .seconds(10))
                try await ping
            }
            // The unanswered ping ended the half-open connection; in the background, no retry.
            try await status.waitFor { if case .disconnected = $0 { true } else { false } }
            #expect(session.armedTimers == [])
        }
    }

    @Test("in the background no heartbeat is armed: not when connect() opens there, nor after an answered ping() (Manual)")
    func noHeartbeatArmedInBackground() async throws {
        let server = TestServer()
        let session = Session(
            settings: try .testing(auto: false) { $0.heartbeat(interval: .seconds(25), timeout: .seconds(10)) },
            transport: server.transport(), clock: clock, lifecycle: lifecycle
        )
        try await withRunningSession(session) { _ in
            await lifecycle.background()
            try await session.connect()
            await clock.settle()
            #expect(session.armedTimers == [.watchdog], "connected in the background: the watchdog, no heartbeat")
            try await session.ping()
            await clock.settle()
            #expect(session.armedTimers == [.watchdog], "the pong re-arms no heartbeat in the background")
            await clock.advance(by: .seconds(29))
            #expect(session.status == .connected)
            #expect(session.armedTimers == [.watchdog])
            await lifecycle.foreground()
            await clock.settle()
            #expect(session.armedTimers == [.heartbeat], "back in the foreground (the probe answered) the heartbeat runs")
        }
    }

    @Test("back in the foreground, a connection that claims to be open is probed before it is trusted")
    func foregroundProbe() async throws {
        let server = TestServer()
        let session = Session(
            settings: try .testing(auto: false) { $0.heartbeat(interval: .seconds(25), timeout: .seconds(10)).foregroundProbeTimeout(.seconds(2)) },
            transport: server.transport(), clock: clock, lifecycle: lifecycle
        )
        try await withRunningSession(session) { status in
            try await session.connect()
            try await status.waitFor(.connected)
            await lifecycle.background()
            server.setFrozen(true)
            await lifecycle.foreground()
            try await server.waitForMessages(2)  // auth, the probe
            await clock.advance(by: .seconds(2))
            try await status.waitFor { $0.reason?.detail?.contains("half-open") == true }
        }
    }

    @Test("after rejected credentials, credentialsChanged() tries again with the provider's new token")
    func credentialsChanged() async throws {
        let server = TestServer(tokens: ["new"])
        let token = Locked("old")
        let settings = try AppSettings.testing { $0.tokenProvider { Secret(token.withLock { $0 }) } }
        let session = Session(settings: settings, transport: server.transport(), clock: clock, lifecycle: lifecycle)
        try await withRunningSession(session) { status in
            try await status.waitFor { $0.reason?.code == .credentialsRejected }
            token.withLock { $0 = "new" }
            await session.credentialsChanged()
            try await status.waitFor(.connected)
            #expect(server.receivedMessages.filter { if case .authenticate = $0 { true } else { false } }.count == 2)
        }
    }

    @Test("credentialsChanged() opens no socket the app did not ask for: Manual before connect(), after disconnect() (a rejection before it included), Auto after disconnect()")
    func credentialsChangedOpensNothing() async throws {
        // Manual, never connected.
        let server = TestServer(tokens: ["good"])
        let transport = CountingTransport(server.transport())
        let manual = Session(settings: try .testing(auto: false, token: "good"), transport: transport, clock: clock, lifecycle: lifecycle)
        try await withRunningSession(manual) { status in
            await manual.credentialsChanged()
            await clock.settle()
            #expect(transport.openedCount == 0, "Manual before connect()")
            try await manual.connect()
            await manual.disconnect()
            try await status.waitFor { if case .disconnected = $0 { true } else { false } }
            await manual.credentialsChanged()
            await clock.settle()
            await clock.advance(by: .seconds(60))
            #expect(transport.openedCount == 1 && session(manual, isDisconnected: true), "Manual after disconnect(): \(manual.status)")
        }
        // Manual, rejected, then disconnect(): the rejection no longer asks for a connection.
        let refusing = CountingTransport(TestServer(tokens: ["other"]).transport())
        let rejected = Session(settings: try .testing(auto: false, token: "bad"), transport: refusing, clock: clock, lifecycle: lifecycle)
        try await withRunningSession(rejected) { status in
            await #expect(throws: SessionError.self) { try await rejected.connect() }
            await rejected.disconnect()
            await rejected.credentialsChanged()
            await clock.settle()
            await clock.advance(by: .seconds(60))
            #expect(refusing.openedCount == 1, "no attempt after disconnect(), though the last one was rejected")
        }
        // Auto, after disconnect().
        let autoTransport = CountingTransport(TestServer(tokens: ["good"]).transport())
        let auto = Session(settings: try .testing(token: "good"), transport: autoTransport, clock: clock, lifecycle: lifecycle)
        try await withRunningSession(auto) { status in
            try await status.waitFor(.connected)
            await auto.disconnect()
            try await status.waitFor { if case .disconnected = $0 { true } else { false } }
            await auto.credentialsChanged()
            await clock.settle()
            await clock.advance(by: .seconds(60))
            #expect(autoTransport.openedCount == 1 && session(auto, isDisconnected: true), "Auto after disconnect(): \(auto.status)")
        }
    }

    private func session(_ session: Session, isDisconnected: Bool) -> Bool {
        if case .disconnected = session.status { isDisconnected } else { !isDisconnected }
    }

    @Test("every state change and policy decision is logged with its reason; the token never is")
    func logging() async throws {
        let secret = "tok-3141592653"
        let server = TestServer(tokens: [secret])
        let records = Locked([LogRecord]())
        let settings = try AppSettings.testing(token: secret) { $0.logging(minimumLevel: .debug) { record in records.withLock { $0.append(record) } } }
        let session = Session(settings: settings, transport: server.transport(), clock: clock, lifecycle: lifecycle)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            await clock.advance(by: .seconds(60))
            server.dropAllConnections()
            try await status.waitFor(.connected)
            await lifecycle.background()
        }
        let lines = records.withLock { $0 }.map(\.description)
        #expect(lines.contains { $0.contains("policy auto: start") && $0.contains("open connection") })
        #expect(lines.contains { $0.contains("status: connecting → connected") })
        #expect(lines.contains { $0.contains("connection lost") && $0.contains("open connection") })
        #expect(lines.contains { $0.contains("app is background") && $0.contains("close connection (appBackgrounded)") })
        for line in lines { #expect(!line.contains(secret), "leaked: \(line)") }
    }
}

/// Collects log records and lets a test await one (an event, not a poll).
final class LogWaiter: Sendable {
    private struct State {
        var records: [LogRecord] = []
        var waiters: [(predicate: @Sendable (LogRecord) -> Bool, count: Int, signal: OneShot)] = []
    }

    private let state = Locked(State())

    var records: [LogRecord] { state.withLock { $0.records } }

    @Sendable func record(_ record: LogRecord) {
        let ready: [OneShot] = state.withLock { state in
            state.records.append(record)
            let records = state.records
            let ready = state.waiters.filter { waiter in records.filter(waiter.predicate).count >= waiter.count }
            state.waiters.removeAll { waiter in records.filter(waiter.predicate).count >= waiter.count }
            return ready.map(\.signal)
        }
        for signal in ready { signal.fire() }
    }

    /// Returns once `count` records match `predicate`; throws after 10 s of real time without
    /// them, with the records there were.
    func waitFor(
        count: Int = 1, file: StaticString = #fileID, line: UInt = #line, _ predicate: @escaping @Sendable (LogRecord) -> Bool
    ) async throws {
        let signal: OneShot? = state.withLock { state in
            guard state.records.filter(predicate).count < count else { return nil }
            let signal = OneShot()
            state.waiters.append((predicate, count, signal))
            return signal
        }
        try await waitWithPatience(
            signal, patience: .seconds(10), expected: "\(count) matching log record(s)",
            found: { "\(records.map(\.message))" }, file: file, line: line)
    }
}

@Suite("Reachability", .timeLimit(.minutes(1)))
struct ReachabilityTests {
    static func makeSession() throws -> (TestServer, ManualNetworkMonitor, TestClock, Session) {
        let server = TestServer()
        let network = ManualNetworkMonitor()
        let clock = TestClock()
        return (server, network, clock, Session(settings: try .testing(), transport: server.transport(), clock: clock, network: network))
    }

    @Test("unreachable stops trying (no retry timer); reachable again tries at once")
    func pauseAndResume() async throws {
        let (server, network, clock, session) = try Self.makeSession()
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            server.setRefusingConnections(true)
            server.dropAllConnections()
            try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
            #expect(session.armedTimers == [.reconnect])
            await network.send(isReachable: false)
            #expect(session.armedTimers == [])
            await clock.advance(by: .seconds(3600))
            #expect(server.acceptedConnectionCount == 1)
            server.setRefusingConnections(false)
            await network.send(isReachable: true)
            try await status.waitFor(.connected)
            #expect(server.acceptedConnectionCount == 2)
        }
    }

    static func isWaitingForNetwork(_ status: ConnectionStatus) -> Bool {
        if case .reconnecting(let reason) = status { reason.code == .networkUnreachable } else { false }
    }

    @Test("the status says what a reconnect waits for: networkUnreachable when the network goes away during the backoff, and for a loss while it is away; the loss's own reason while a retry is armed")
    func statusWaitsForNetwork() async throws {
        let (server, network, _, session) = try Self.makeSession()
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            server.setRefusingConnections(true)
            server.dropAllConnections()
            let lost = try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
            let before = try #require(lost.last?.reason)
            #expect(before.code == .serverClosed, "a retry is armed: the backoff is what it waits for")
            await network.send(isReachable: false)
            #expect(session.status.reason?.code == .networkUnreachable, "\(session.status)")
            #expect(session.status.reason?.detail?.contains("\(before)") == true, "it names what ended the connection: \(session.status)")
            server.setRefusingConnections(false)
            await network.send(isReachable: true)
            try await status.waitFor(.connected)
            // The network goes away with the connection up: nothing changes until the socket
            // ends; that loss waits for the network, and says so.
            await network.send(isReachable: false)
            #expect(session.status == .connected)
            server.dropAllConnections()
            let waiting = try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
            #expect(waiting.count == 1 && waiting.last.map(Self.isWaitingForNetwork) == true, "straight to networkUnreachable: \(waiting)")
            #expect(session.armedTimers == [], "no retry timer while the network is away")
            await network.send(isReachable: true)
            try await status.waitFor(.connected)
        }
    }

    @Test("the Linux defaults: a manual lifecycle source (active) and a manual network monitor (reachable)")
    func platformDefaults() {
        #if !canImport(Network)
        #expect(PlatformDefaults.networkMonitor() is ManualNetworkMonitor)
        #endif
        #if !canImport(UIKit) && !canImport(AppKit)
        #expect(PlatformDefaults.lifecycleSource() is ManualLifecycleSource)
        #endif
        #expect(PlatformDefaults.networkMonitor().isReachable)
        #expect(PlatformDefaults.lifecycleSource().state == .active)
    }
}

@Suite("Bad input from the server", .timeLimit(.minutes(1)))
struct BadServerInputTests {
    @Test("replies to requests nobody made, and errors that answer none, are ignored: the session keeps working")
    func unknownReplies() async throws {
        let server = TestServer()
        let session = Session(settings: try .testing(), transport: server.transport(), clock: TestClock())
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let codec = JSONWireCodec()
            server.sendToAll(try codec.encode(ServerMessage.ack(Ack(id: 999, sequence: 5))))
            server.sendToAll(try codec.encode(ServerMessage.pong(id: 12345)))
            server.sendToAll(try codec.encode(ServerMessage.error(ServerError(id: nil, code: "internal", message: "noise"))))
            server.sendToAll(try codec.encode(ServerMessage.message(ChannelMessage(channel: "never-subscribed", sequence: 1, data: 1))))
            #expect(try await session.publish("still fine", to: "room").sequence == 1)
            #expect(session.status == .connected)
        }
    }

    @Test("binary frames and unknown message types end the connection with a typed reason; the session recovers")
    func unknownTypes() async throws {
        let server = TestServer()
        let clock = TestClock()
        let session = Session(settings: try .testing(), transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            for frame in [TransportFrame.binary([1, 2, 3]), .text(#"{"type":"surprise"}"#)] {
                await clock.advance(by: .seconds(60))
                server.sendToAll(frame)
                let seen = try await status.waitFor(.connected)
                #expect(seen.first?.reason?.code == .error)
                #expect(seen.first?.reason?.detail?.contains("bad frame from server") == true)
            }
        }
    }
}

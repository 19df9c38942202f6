import ConnectionPolicy
@testable import SDK
@testable import SDKTesting
import Testing

/// The heartbeat follows the device's conditions, end to end on the test clock: the liveness
/// the control decides is the one the session runs.
@Suite("Liveness under the device's conditions", .timeLimit(.minutes(1)))
struct SessionConditionsLivenessTests {
    let clock = TestClock()

    func pings(_ server: TestServer) -> Int {
        server.receivedMessages.filter { if case .ping = $0 { true } else { false } }.count
    }

    @Test("on an expensive path the foreground heartbeat goes every 50 s, not 25 s; moved to Wi-Fi, the open socket is probed at once and the heartbeat runs at 25 s again")
    func expensivePath() async throws {
        let server = TestServer()
        let conditions = ConditionsDriver(DeviceConditions(isExpensive: true, interface: .cellular))
        let session = Session(settings: try .testing { $0.heartbeat(interval: .seconds(25), timeout: .seconds(10)) }, transport: server.transport(), clock: clock, conditions: conditions)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            #expect(await session.liveness.heartbeat?.interval == .seconds(50))
            await clock.settle()
            #expect(session.armedTimers == [.heartbeat])
            #expect(clock.nextDeadline == clock.now.advanced(by: .seconds(50)), "armed for 50 s: no wake-up at 25 s to find it early")
            await clock.advance(by: .seconds(49))
            #expect(pings(server) == 0, "no ping at 25 s on an expensive path")
            await clock.advance(by: .seconds(1))
            #expect(pings(server) == 1)
            await conditions.path(.wifi)
            await clock.settle()
            #expect(pings(server) == 2, "the path changed: the socket is probed right away")
            #expect(await session.liveness.heartbeat?.interval == .seconds(25))
            await clock.advance(by: .seconds(24))
            #expect(pings(server) == 2)
            await clock.advance(by: .seconds(1))
            #expect(pings(server) == 3, "the heartbeat armed after the probe's pong, at the settings' 25 s")
        }
    }

    @Test("PowerSaving.off: in Low Power Mode the heartbeat stays at the settings' 25 s")
    func off() async throws {
        let server = TestServer()
        let conditions = ConditionsDriver(DeviceConditions(isLowPowerModeEnabled: true))
        let session = Session(settings: try .testing { $0.heartbeat(interval: .seconds(25), timeout: .seconds(10)).powerSaving(.off) }, transport: server.transport(), clock: clock, conditions: conditions)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            await clock.advance(by: .seconds(25))
            #expect(pings(server) == 1)
            #expect(await session.deviceConditions.isLowPowerModeEnabled)
        }
    }

    @Test("the conditions source's reachability reaches the policy: unreachable holds the reconnect, reachable retries at once")
    func reachability() async throws {
        let server = TestServer()
        let conditions = ConditionsDriver()
        let session = Session(settings: try .testing { $0.heartbeat(interval: .seconds(25), timeout: .seconds(10)) }, transport: server.transport(), clock: clock, conditions: conditions)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            await conditions.unreachable()
            server.dropAllConnections()
            _ = try await status.waitFor { $0.reason?.code == .networkUnreachable }
            await clock.advance(by: .seconds(60))
            #expect(session.status.reason?.code == .networkUnreachable, "no retry while the path is gone")
            await conditions.path(.wifi)
            try await status.waitFor(.connected)
        }
    }

    @Test("with a network monitor too, reachability is the monitor's: the conditions source's is ignored")
    func monitorOwnsReachability() async throws {
        let server = TestServer()
        let conditions = ConditionsDriver()
        let network = ManualNetworkMonitor(isReachable: true)
        let session = Session(settings: try .testing { $0.heartbeat(interval: .seconds(25), timeout: .seconds(10)) }, transport: server.transport(), clock: clock, network: network, conditions: conditions)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            await conditions.send(DeviceConditions(isNetworkReachable: false, isLowPowerModeEnabled: true))
            #expect(await session.deviceConditions == DeviceConditions(isNetworkReachable: true, isLowPowerModeEnabled: true))
            #expect(session.status == .connected)
        }
    }

    @Test("a path change probes only an open socket, only between two known interfaces of a reachable network, only when the liveness probes")
    func probeOnPathChange() async throws {
        let server = TestServer()
        let conditions = ConditionsDriver()
        let session = Session(
            settings: try .testing { $0.heartbeat(interval: .seconds(25), timeout: .seconds(10)) }, transport: server.transport(), clock: clock,
            conditions: conditions
        )
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            await conditions.path(.wifi)  // unknown → Wi-Fi: the first report, not a change
            await clock.settle()
            #expect(pings(server) == 0)
            await conditions.path(.wifi, isExpensive: true)  // the same interface
            await clock.settle()
            #expect(pings(server) == 0)
            await conditions.path(.cellular, isExpensive: true)
            await clock.settle()
            #expect(pings(server) == 1)
            server.setFrozen(true)
            await conditions.path(.wifi)
            await clock.settle()
            #expect(pings(server) == 2)
            await clock.advance(by: .milliseconds(2_900))
            #expect(session.status == .connected)
            await clock.advance(by: .milliseconds(100))
            let seen = try await status.waitFor { $0.reason?.code == .networkLost }
            #expect(seen.last?.reason?.detail?.contains("half-open") == true, "an unanswered probe ends the socket in the probe's timeout (3 s), not the heartbeat's (10 s)")
        }
    }

    @Test(
        "saving never extends what the app set: in Low Power Mode on an expensive path Manual's watchdog still ends the connection at 30 s, Auto's 10 s grace at 10 s",
        arguments: [false, true]
    )
    func windowsNotExtended(auto: Bool) async throws {
        let server = TestServer()
        let lifecycle = LifecycleDriver()
        let conditions = ConditionsDriver(DeviceConditions(isExpensive: true, interface: .cellular, isLowPowerModeEnabled: true))
        let settings = try AppSettings.testing(auto: auto) { $0.heartbeat(interval: .seconds(25), timeout: .seconds(10)).backgroundGrace(.seconds(10)) }
        let session = Session(settings: settings, transport: server.transport(), clock: clock, lifecycle: lifecycle, conditions: conditions)
        let window: Duration = auto ? .seconds(10) : .seconds(30)
        try await withRunningSession(session) { status in
            if !auto { try await session.connect() }
            try await status.waitFor(.connected)
            await lifecycle.background()
            await clock.advance(by: window - .milliseconds(1))
            #expect(session.status == .connected)
            await clock.advance(by: .milliseconds(1))
            try await status.waitFor(.disconnected(auto ? .appBackgrounded : .watchdogExpired))
        }
    }

    /// Runs `seconds` of a session subscribed to "news" while the server publishes to it every
    /// 10 s; returns the session, the server and the pings the client sent.
    func streaming(_ rules: PowerSaving, seconds: Int) async throws -> Int {
        let server = TestServer()
        let session = Session(
            settings: try .testing { $0.heartbeat(interval: .seconds(25), timeout: .seconds(10)).powerSaving(rules) }, transport: server.transport(),
            clock: clock
        )
        var sent = 0
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let news = try await session.subscribe(to: "news")
            for second in 1...seconds {
                await clock.advance(by: .seconds(1))
                if second % 10 == 0 { _ = try server.publish(JSONValue(second), to: "news") }
            }
            await clock.settle()
            sent = pings(server)
            withExtendedLifetime(news) {}
        }
        return sent
    }

    @Test("a stream from the server proves the connection alive: over 130 s the client pings twice (65 s, 125 s: it must not stay silent past two intervals), not 5 times")
    func trafficSkipsTheHeartbeat() async throws {
        #expect(try await streaming(.standard, seconds: 130) == 2)
        #expect(try await streaming(.off, seconds: 130) == 5, "PowerSaving.off: a ping every 25 s, traffic or not")
    }

    @Test("skipping keeps the bound: once the server goes silent, the dead connection is found 35 s after it was last heard from")
    func skippingKeepsTheBound() async throws {
        let server = TestServer()
        let session = Session(
            settings: try .testing { $0.heartbeat(interval: .seconds(25), timeout: .seconds(10)) }, transport: server.transport(), clock: clock
        )
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let news = try await session.subscribe(to: "news")
            for second in 1...130 {
                await clock.advance(by: .seconds(1))
                if second % 10 == 0 { _ = try server.publish(JSONValue(second), to: "news") }
            }
            server.setFrozen(true)  // last heard from at 130 s
            await clock.advance(by: .milliseconds(34_999))
            #expect(session.status == .connected)
            await clock.advance(by: .milliseconds(1))
            let seen = try await status.waitFor { $0.reason?.code == .networkLost }
            #expect(seen.last?.reason?.detail?.contains("half-open") == true)
            withExtendedLifetime(news) {}
        }
    }
}

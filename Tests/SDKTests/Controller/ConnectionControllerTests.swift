import ConnectionPolicy
import SDK
import SDKTesting
import Testing

/// The session's lifecycle tables, run against the public controller driving a fake client
/// (``TestConnection``) on the test clock: seed 004's Auto and Manual rows and seed 000's edge
/// cases, plus what a foreign client can do wrong.
@Suite("ConnectionController with an app's own client", .timeLimit(.minutes(1)))
struct ConnectionControllerTests {
    let client = TestConnection()
    let clock = TestClock()
    let lifecycle = LifecycleDriver()
    let network = ManualNetworkMonitor()
    let backoff = Backoff(initial: .seconds(1), multiplier: 2, maximum: .seconds(8), jitter: 0)

    func auto(grace: Duration = .zero) -> AutoPolicy {
        AutoPolicy(.init(backgroundGrace: grace, backoff: backoff, stableAfter: .seconds(5)), jitter: .fixed(0))
    }

    func manual() -> ManualPolicy {
        ManualPolicy(.init(backgroundTimeout: .seconds(30), backoff: backoff, stableAfter: .seconds(5)), jitter: .fixed(0))
    }

    func controller(
        _ policy: some SessionPolicy, backgroundTime: any BackgroundTimeProvider = NoBackgroundTime(),
        isRetryable: @escaping @Sendable (any Error) -> RetryDisposition = { _ in .retry },
        ping: (@Sendable () async throws -> Void)? = nil
    ) -> ConnectionController {
        ConnectionController(
            connection: client, policy: policy, clock: clock, lifecycle: lifecycle, network: network, backgroundTime: backgroundTime,
            connectTimeout: .seconds(10), isRetryable: isRetryable, ping: ping, logger: .silent
        )
    }

    @Test("Auto: launch connects, background disconnects at once, foreground reconnects")
    func autoTable() async throws {
        let controller = controller(auto())
        try await withRunningController(controller) { status in
            try await status.waitFor(.connected)
            await lifecycle.background()
            #expect(controller.status == .disconnected(.appBackgrounded))
            #expect(controller.armedTimers == [], "no timer runs in the background in Auto mode")
            try await client.waitForCloseCalls(1)
            #expect(client.openCount == 0)
            await lifecycle.foreground()
            try await status.waitFor(.connected)
            #expect(client.openCalls == 2)
        }
        #expect(client.openCount == 0, "every connection opened is closed")
        #expect(client.mostOpenAtOnce == 1)
    }

    @Test("Manual: nothing at launch; connect(); the background watchdog closes after 30 s unless pinged, and each ping buys a full window")
    func manualWatchdogWithPings() async throws {
        let pings = Locked(0)
        let controller = controller(manual(), ping: { pings.withLock { $0 += 1 } })
        try await withRunningController(controller) { status in
            #expect(client.openCalls == 0)
            try await controller.connect()
            #expect(controller.status == .connected)
            await lifecycle.background()
            #expect(controller.armedTimers == [.watchdog])
            await clock.advance(by: .seconds(20))
            try await controller.ping()
            #expect(pings.withLock { $0 } == 1, "the app's own ping ran on the client")
            await clock.advance(by: .seconds(20))
            #expect(controller.status == .connected, "the ping bought a full window")
            await clock.advance(by: .seconds(10))
            try await status.waitFor(.disconnected(.watchdogExpired))
            try await client.waitForCloseCalls(1)
            #expect(client.openCount == 0)
            await lifecycle.foreground()
            #expect(controller.status == .disconnected(.watchdogExpired), "Manual mode does not reconnect by itself")
        }
    }

    @Test("Manual: in the background the watchdog closes exactly 30 s later, not a moment before")
    func manualWatchdogBoundary() async throws {
        let controller = controller(manual())
        try await withRunningController(controller) { status in
            try await controller.connect()
            await lifecycle.background()
            await clock.advance(by: .milliseconds(29_999))
            #expect(controller.status == .connected)
            #expect(controller.armedTimers == [.watchdog])
            await clock.advance(by: .milliseconds(1))
            #expect(controller.status == .disconnected(.watchdogExpired))
            #expect(controller.armedTimers == [])
        }
    }

    @Test("a late report about an earlier attempt leaves the current connection alone")
    func staleReport() async throws {
        let controller = controller(auto())
        try await withRunningController(controller) { status in
            try await status.waitFor(.connected)
            client.drop()
            await clock.advance(by: .seconds(1))  // the backoff after a short-lived connection
            try await status.waitFor(.connected)
            #expect(client.openCalls == 2)
            client.report(lost: .serverClosed("late"), on: 1)
            await clock.advance(by: .seconds(60))
            #expect(controller.status == .connected)
            #expect(client.openCalls == 2)
            #expect(client.openCount == 1)
        }
    }

    @Test("rapid flapping converges: one connection at the end, never two at once")
    func flapping() async throws {
        let controller = controller(auto())
        try await withRunningController(controller) { status in
            try await status.waitFor(.connected)
            for _ in 0..<10 {
                await lifecycle.background()
                await lifecycle.foreground()
            }
            try await status.waitFor(.connected)
            #expect(controller.status == .connected)
        }
        #expect(client.mostOpenAtOnce == 1)
        #expect(client.openCount == 0)
    }

    @Test("background during a reconnect: the retry is cancelled and nothing opens in the background")
    func backgroundDuringReconnect() async throws {
        let controller = controller(auto())
        try await withRunningController(controller) { status in
            try await status.waitFor(.connected)
            client.drop()
            try await status.waitFor(.reconnecting(.networkLost))
            #expect(controller.armedTimers == [.reconnect])
            await lifecycle.background()
            #expect(controller.status == .disconnected(.appBackgrounded))
            #expect(controller.armedTimers == [])
            await clock.advance(by: .seconds(60))
            #expect(client.openCalls == 1)
            await lifecycle.foreground()
            try await status.waitFor(.connected)
            #expect(client.openCalls == 2)
        }
    }

    @Test("disconnect() then foreground: nothing reconnects until connect()")
    func disconnectThenForeground() async throws {
        let controller = controller(auto())
        try await withRunningController(controller) { status in
            try await status.waitFor(.connected)
            await controller.disconnect()
            #expect(controller.status == .disconnected(.appRequested))
            await lifecycle.background()
            await lifecycle.foreground()
            await network.send(isReachable: false)
            await network.send(isReachable: true)
            #expect(controller.status == .disconnected(.appRequested))
            #expect(client.openCalls == 1)
            try await controller.connect()
            #expect(client.openCalls == 2)
        }
    }

    @Test("network down stops retries; back up tries again at once")
    func networkDownAndUp() async throws {
        let controller = controller(auto())
        try await withRunningController(controller) { status in
            try await status.waitFor(.connected)
            await network.send(isReachable: false)
            client.drop()
            try await status.waitFor { $0.reason != nil }
            #expect(controller.armedTimers == [], "no retry timer while the network is down")
            await clock.advance(by: .seconds(60))
            #expect(client.openCalls == 1)
            await network.send(isReachable: true)
            try await status.waitFor(.connected)
            #expect(client.openCalls == 2)
        }
    }

    @Test("the device's conditions reach the controller's policy: Wi-Fi to cellular sends a reconnect waiting on its backoff at once; the liveness follows Low Power Mode")
    func conditionsReachThePolicy() async throws {
        let conditions = ConditionsDriver(DeviceConditions(interface: .wifi))
        let controller = ConnectionController(
            connection: client, policy: auto(), clock: clock, lifecycle: lifecycle, conditions: conditions, connectTimeout: .seconds(10), logger: .silent
        )
        try await withRunningController(controller) { status in
            try await status.waitFor(.connected)
            client.drop()  // open for less than stableAfter: a failure, retried after the backoff
            try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
            await clock.settle()
            #expect(controller.armedTimers == [.policy(.reconnect)], "a retry waits on its backoff")
            #expect(client.openCalls == 1)
            await conditions.path(.cellular, isExpensive: true)
            try await status.waitFor(.connected)
            #expect(client.openCalls == 2, "the path changed: retried at once, not after the backoff")
            await conditions.lowPowerMode(true)
            #expect(await controller.liveness.keepAliveStretch == 2)
        }
    }

    @Test("an open that hangs is abandoned after the connect timeout, closed, and retried")
    func hangingOpen() async throws {
        client.script(.hangs)
        let controller = controller(auto())
        try await withRunningController(controller) { status in
            try await client.waitForOpenCalls(1)
            #expect(controller.status == .connecting)
            await clock.advance(by: .seconds(10))
            try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
            #expect(controller.status.reason?.detail?.contains("connecting took longer than") == true, "\(controller.status)")
            try await client.waitForCloseCalls(1)
            await clock.advance(by: .seconds(1))
            try await status.waitFor(.connected)
            #expect(client.openCalls == 2)
        }
        #expect(client.mostOpenAtOnce == 1)
    }

    @Test("a client that reports 'lost' twice gets one reconnect, not two")
    func lostTwice() async throws {
        let controller = controller(auto())
        try await withRunningController(controller) { status in
            try await status.waitFor(.connected)
            client.report(lost: .networkLost, on: 1)
            client.report(lost: .serverClosed("again"), on: 1)
            try await status.waitFor(.reconnecting(.networkLost))
            await clock.advance(by: .seconds(1))
            try await status.waitFor(.connected)
            #expect(client.openCalls == 2)
            #expect(controller.armedTimers == [])
            let seen = await status.history
            #expect(seen.filter { if case .reconnecting = $0 { true } else { false } }.count == 1, "\(seen)")
        }
        #expect(client.mostOpenAtOnce == 1)
    }

    @Test("a client that opens after it was cancelled is closed at once; the controller never counts it")
    func openAfterCancel() async throws {
        client.script(.ignoresCancellation)
        let controller = controller(auto())
        try await withRunningController(controller) { status in
            try await client.waitForOpenCalls(1)
            await lifecycle.background()
            #expect(controller.status == .disconnected(.appBackgrounded))
            try await client.waitForCloseCalls(1)
            client.openLate(1)
            try await client.waitForCloseCalls(2)
            #expect(client.openCount == 0, "closed at once")
            #expect(client.strangerCloses == 0, "the close names the attempt the client opened")
            #expect(controller.status == .disconnected(.appBackgrounded))
            await lifecycle.foreground()
            try await status.waitFor(.connected)
            #expect(client.openCount == 1)
        }
        #expect(client.mostOpenAtOnce == 1)
    }
}

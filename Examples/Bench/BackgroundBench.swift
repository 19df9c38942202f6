import SDK
import SDKTesting

/// `bench background`: timer wake-ups and open sockets during 10 minutes of simulated
/// background on a counting clock (`TestClock`), with the production defaults (heartbeat on).
/// Auto must wake 0 times with 0 sockets; Manual exactly once (the watchdog), 0 sockets after.
struct BackgroundBench {
    let minutes: Int

    func run() async throws {
        let auto = try await measure(auto: true)
        let manual = try await measure(auto: false)
        print("  auto: \(auto.wakeups) wake-ups, \(auto.sockets) sockets open; manual: \(manual.wakeups) wake-ups, \(manual.sockets) sockets open")
        print("background: auto_wakeups=\(auto.wakeups) manual_wakeups=\(manual.wakeups) sockets_open=\(auto.sockets + manual.sockets)")
    }

    private func measure(auto: Bool) async throws -> (wakeups: Int, sockets: Int) {
        let server = TestServer()
        let clock = TestClock()
        let lifecycle = LifecycleDriver()
        // The production defaults: heartbeat 25 s / 10 s, watchdog 30 s.
        let settings = try AppSettings.Builder().serverURL("ws://127.0.0.1:9/").token("bench").autoEstablishSocketConnection(auto).logger(.silent).build()
        let transport = server.transport()
        let session = Session(settings: settings, transport: transport, clock: clock, lifecycle: lifecycle)
        var result = (wakeups: 0, sockets: 0)
        try await withRunningSession(session) { status in
            if !auto { try await session.connect() }
            try await status.waitFor(.connected)
            // A minute in the foreground: the heartbeat runs there.
            for _ in 0..<60 { await clock.advance(by: .seconds(1)) }
            await lifecycle.background()
            // Let cancelled timers' sleepers go (they were cancelled, not woken).
            let expectedSleepers = auto ? 0 : 1
            while clock.sleeperCount != expectedSleepers { await Task.yield() }
            let before = clock.wakeUps
            for _ in 0..<(minutes * 60) { await clock.advance(by: .seconds(1)) }
            try await server.waitForOpenConnections(0)
            result = (clock.wakeUps - before, transport.openConnectionCount)
        }
        return result
    }
}

import NIOTransport
import ReferenceServer
import SDK

/// The two narrated sessions the demo runs against the in-process reference server.
struct Scenarios {
    let server: RealtimeServer
    let port: Int
    let narrator: Narrator

    func settings(auto: Bool, backgroundTimeout: Duration = .seconds(30)) throws -> AppSettings {
        try AppSettings.Builder()
            .serverURL("ws://127.0.0.1:\(port)/")
            .token("demo-token")
            .autoEstablishSocketConnection(auto)
            .backgroundTimeout(backgroundTimeout)
            .reconnectBackoff(Backoff(initial: .milliseconds(200), multiplier: 2, maximum: .seconds(2), jitter: 0.2))
            .stableConnectionAfter(.milliseconds(500))
            .build()
    }

    func withSession(
        _ settings: AppSettings, lifecycle: ManualLifecycleSource, backgroundTime: any BackgroundTimeProvider = NoBackgroundTime(),
        _ body: (Session, StatusWatcher) async throws -> Void
    ) async throws {
        try await withNarratedSession(settings, lifecycle: lifecycle, narrator: narrator, backgroundTime: backgroundTime, body)
    }

    func auto() async throws {
        narrator.section("Auto mode (the default): connected in the foreground, disconnected in the background")
        let lifecycle = ManualLifecycleSource(initialState: .active)
        try await withSession(try settings(auto: true), lifecycle: lifecycle) { session, watcher in
            narrator.say("app launches (foreground); Auto mode connects by itself")
            let connected = await watcher.wait { $0 == .connected }
            narrator.check(connected != nil, "connected and authenticated at launch, without connect()")

            let room = try await session.subscribe(to: "room")
            var messages = room.makeAsyncIterator()
            narrator.say("subscribed to \"room\"; the server publishes \"hello\"")
            try server.publish("hello", to: "room")
            let first = try await messages.next()
            narrator.check(first?.data == "hello", "received \"hello\" (seq \(first?.sequence ?? 0))")

            narrator.say("app goes to the background")
            await lifecycle.send(.background)
            narrator.check(session.status == .disconnected(.appBackgrounded), "disconnected at once, reason: app backgrounded", detail: "\(session.status)")
            await server.waitForOpenConnections(0)
            narrator.check(server.openConnectionCount == 0, "the server sees no connection while the app is in the background")
            let backgroundTimers = session.armedTimers
            narrator.check(backgroundTimers.isEmpty, "no timer runs in the background (no retries, no heartbeat)", detail: "\(backgroundTimers)")
            try server.publish("sent while you were away", to: "room")
            narrator.say("the server publishes a message while the app is away")

            narrator.say("app returns to the foreground")
            watcher.skipSeen()
            var reports = session.recoveryReports.makeAsyncIterator()
            await lifecycle.send(.active)
            let back = await watcher.wait { $0 == .connected }
            narrator.check(back != nil, "reconnected on return to the foreground")
            let missed = try await messages.next()
            narrator.check(missed?.data == "sent while you were away", "rejoined \"room\" and caught up: the missed message arrived once (seq \(missed?.sequence ?? 0))")
            if let report = await reports.next() {
                narrator.say("recovery report: \(report)")
                narrator.check(report.trigger == .foreground && report.caughtUp == ["room": 1] && report.isComplete,
                               "the recovery report names the trigger, the replayed steps and the caught-up message", detail: "\(report)")
            } else {
                narrator.check(false, "a recovery report was published")
            }

            narrator.say("the server drops every connection (a network loss)")
            watcher.skipSeen()
            server.dropAllConnections()
            let lost = await watcher.wait { if case .reconnecting = $0 { true } else { $0 == .connected } }
            narrator.check(lost.map { if case .reconnecting = $0 { true } else { false } } ?? false, "the loss is reported with its reason, and a retry is under way")
            let again = await watcher.wait { $0 == .connected }
            narrator.check(again != nil, "reconnected by itself (backoff with jitter)")
            _ = try await session.publish("after the drop", to: "room")
            let after = try await messages.next()
            narrator.check(after?.data == "after the drop", "the subscription is active again: publish → received")
        }
    }

    func manual() async throws {
        let window = Duration.seconds(2)
        narrator.section("Manual mode: connect() and disconnect() are the app's; a background watchdog")
        narrator.say("(the demo shortens the 30 s watchdog to 2 s through AppSettings.backgroundTimeout)")
        let lifecycle = ManualLifecycleSource(initialState: .active)
        let backgroundTime = DemoBackgroundTime(narrator: narrator)
        try await withSession(try settings(auto: false, backgroundTimeout: window), lifecycle: lifecycle, backgroundTime: backgroundTime) { session, watcher in
            try await Task.sleep(for: .milliseconds(300))
            narrator.check(session.status == .disconnected(.notStarted), "at launch nothing connects until the app calls connect()", detail: "\(session.status)")

            narrator.say("app calls connect()")
            try await session.connect()
            narrator.check(session.status == .connected, "connect() returns once connected")

            narrator.say("app goes to the background")
            await lifecycle.send(.background)
            let timers = session.armedTimers
            narrator.check(timers == [.watchdog], "the watchdog is armed (2 s); still connected", detail: "\(timers)")
            narrator.check(backgroundTime.heldCount == 1, "background time is held while the socket stays open in the background (what keeps iOS from suspending the app)")
            for second in 1...3 {
                try await Task.sleep(for: .seconds(1))
                try await session.ping()
                narrator.say("ping() after \(second) s in the background → pong; the window starts again")
            }
            narrator.check(session.status == .connected, "still connected after 3 s in the background: each ping bought another 2 s")

            narrator.say("the app stops pinging")
            let stoppedAt = ContinuousClock.now
            let watchdog = await watcher.wait(timeout: .seconds(4)) { $0 == .disconnected(.watchdogExpired) }
            let waited = ContinuousClock.now - stoppedAt
            narrator.check(watchdog != nil && waited >= .milliseconds(1900), "disconnected by the watchdog \(Narrator.seconds(waited)) after the last ping")
            let released = await backgroundTime.waitUntilReleased(timeout: .seconds(2))
            narrator.check(released, "the background time is released once the close frame is written")

            narrator.say("app returns to the foreground")
            await lifecycle.send(.active)
            try await Task.sleep(for: .milliseconds(500))
            narrator.check(session.status == .disconnected(.watchdogExpired), "stays disconnected in the foreground: only connect() reconnects")

            narrator.say("app calls connect()")
            try await session.connect()
            narrator.check(session.status == .connected, "connected again")
            await session.disconnect()
            narrator.check(session.status == .disconnected(.appRequested), "disconnect(): disconnected, reason: app requested")
        }
    }
}

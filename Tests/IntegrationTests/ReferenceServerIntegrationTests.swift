import NIOCore
import NIOPosix
import NIOTransport
import ReferenceServer
import SDK
import SDKTesting
import Testing

@Suite("Sessions against the reference server over loopback", .timeLimit(.minutes(1)), .serialized)
struct ReferenceServerIntegrationTests {
    // Seed 004, Auto mode, end to end with real sockets.
    @Test("Auto: connected in the foreground, disconnected at once in the background, rejoined on return")
    func autoTable() async throws {
        try await withReferenceServer { server, port in
            let lifecycle = LifecycleDriver()
            let session = Session(settings: try integrationSettings(port: port), transport: NIOWebSocketTransport(), lifecycle: lifecycle)
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                let room = try await session.subscribe(to: "room")
                var messages = room.makeAsyncIterator()
                try server.publish("one", to: "room")
                #expect(try await messages.next()?.data == "one")

                await lifecycle.background()
                #expect(session.status == .disconnected(.appBackgrounded))
                await server.waitForOpenConnections(0)
                try server.publish("while away", to: "room")

                await lifecycle.foreground()
                try await status.waitFor(.connected)
                #expect(try await messages.next()?.data == "while away")
                #expect(try await session.publish("two", to: "room").sequence == 3)
                #expect(try await messages.next()?.data == "two")
            }
            await server.waitForOpenConnections(0)
        }
    }

    // Seed 004, Manual mode, end to end (the watchdog shortened to 3 s through the settings: a
    // ping every 500 ms leaves 2.5 s of slack on a loaded machine, under TSan too).
    @Test("Manual: pings keep it alive in the background; without them the watchdog disconnects; foreground stays")
    func manualTable() async throws {
        try await withReferenceServer { server, port in
            let lifecycle = LifecycleDriver()
            let settings = try integrationSettings(port: port, auto: false) { $0.backgroundTimeout(.seconds(3)) }
            let session = Session(settings: settings, transport: NIOWebSocketTransport(), lifecycle: lifecycle)
            try await withRunningSession(session, patience: .realServer) { status in
                #expect(session.status == .disconnected(.notStarted))
                try await session.connect()
                try await status.waitFor(.connected)
                await lifecycle.background()
                let clock = ContinuousClock()
                let start = clock.now
                // Ping every 500 ms for 3.5 s: longer than the watchdog, still connected.
                for _ in 0..<7 {
                    try await Task.sleep(for: .milliseconds(500))
                    try await session.ping()
                }
                #expect(session.status == .connected)
                try await status.waitFor(.disconnected(.watchdogExpired))
                // The last ping came at 3.5 s or later, and bought a whole window.
                #expect(clock.now - start >= .milliseconds(6_500))
                await lifecycle.foreground()
                #expect(session.status == .disconnected(.watchdogExpired))
                #expect(session.armedTimers == [])
                try await session.connect()
                #expect(session.status == .connected)
            }
        }
    }

    @Test("server killed and restarted on the same port: the session reconnects and rejoins")
    func serverRestart() async throws {
        let first = RealtimeServer(RealtimeServer.Configuration(tokens: ["it-token"]))
        let (ports, portSink) = AsyncStream<Int>.makeStream()
        let firstRun = Task { try await first.run { portSink.yield($0) } }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        let session = Session(settings: try integrationSettings(port: port), transport: NIOWebSocketTransport())
        try await withRunningSession(session, patience: .realServer) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            var messages = room.makeAsyncIterator()
            try first.publish("before", to: "room")
            #expect(try await messages.next()?.data == "before")

            firstRun.cancel()
            _ = await firstRun.result
            try await status.waitFor { if case .reconnecting = $0 { true } else { false } }

            try await withReferenceServer(RealtimeServer.Configuration(port: port, tokens: ["it-token"])) { second, _ in
                try await status.waitFor(.connected)
                // The new server's numbering starts again; the session follows it.
                _ = try await session.publish("after", to: "room")
                #expect(try await messages.next()?.data == "after")
                #expect(second.acceptedConnectionCount == 1)
            }
        }
    }

    @Test("credentials rejected: a typed reason, no retry loop")
    func credentialsRejected() async throws {
        try await withReferenceServer { server, port in
            let session = Session(settings: try integrationSettings(port: port, token: "wrong"), transport: NIOWebSocketTransport())
            try await withRunningSession(session, patience: .realServer) { status in
                let seen = try await status.waitFor { $0.reason?.code == .credentialsRejected }
                #expect(seen.last.map { if case .disconnected = $0 { true } else { false } } == true)
                #expect(session.armedTimers == [], "nothing is scheduled: no retry will come")
                // Version 2: refused at the upgrade (HTTP 401), so no WebSocket was accepted.
                #expect(server.upgradeRequestCount == 1)
                #expect(server.refusedUpgradeCount == 1)
                #expect(server.acceptedConnectionCount == 0)
            }
        }
    }

    @Test("every frame delayed by 50 ms: still correct and in order")
    func delayedFrames() async throws {
        var configuration = RealtimeServer.Configuration(tokens: ["it-token"])
        configuration.faults.frameDelay = .milliseconds(50)
        try await withReferenceServer(configuration) { server, port in
            let session = Session(settings: try integrationSettings(port: port), transport: NIOWebSocketTransport())
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                let room = try await session.subscribe(to: "room")
                var messages = room.makeAsyncIterator()
                for n in 1...20 { try server.publish(JSONValue(n), to: "room") }
                for n in 1...20 { #expect(try await messages.next()?.sequence == UInt64(n)) }
            }
        }
    }

    @Test("a server that closes with 4429 retry-after is retried after the delay it gave")
    func retryAfter() async throws {
        try await withReferenceServer { server, port in
            let session = Session(settings: try integrationSettings(port: port), transport: NIOWebSocketTransport())
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                try server.closeAllConnections(code: .retryAfter, reason: CloseCode.retryAfterReason(.milliseconds(300)))
                let start = ContinuousClock.now
                try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
                #expect(session.armedTimers == [.reconnect])
                try await status.waitFor(.connected)
                #expect(ContinuousClock.now - start >= .milliseconds(250))
            }
        }
    }

    @Test("closing every connection reaches one whose upgrade is still being answered (its 101 can reach the client before the server registers it)")
    func closeDuringUpgrade() async throws {
        var configuration = RealtimeServer.Configuration(tokens: ["it-token"])
        // The 101 leaves 500 ms after the server decided the upgrade: the close comes in between.
        configuration.faults.frameDelay = .milliseconds(500)
        try await withReferenceServer(configuration) { server, port in
            let session = Session(settings: try integrationSettings(port: port), transport: NIOWebSocketTransport())
            try await withRunningSession(session, patience: .realServer) { status in
                await server.waitForUpgradeRequests(1)
                try server.closeAllConnections(code: .retryAfter, reason: CloseCode.retryAfterReason(.milliseconds(100)))
                try await status.waitFor(.connected)
                // The server's close reached it (not a loss of another kind), and it came back.
                let passed = try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
                #expect(passed.last?.reason?.description.contains("4429") == true, "\(passed)")
                try await status.waitFor(.connected)
                #expect(server.upgradeRequestCount >= 2)
            }
        }
    }

    @Test("an upgrade whose client leaves before its 101 leaves nothing behind (a later connection could have found it)")
    func abandonedUpgrade() async throws {
        var configuration = RealtimeServer.Configuration(tokens: ["it-token"])
        // The 101 leaves 500 ms after the decision: the client is gone before then.
        configuration.faults.frameDelay = .milliseconds(500)
        try await withReferenceServer(configuration) { server, port in
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get()
            let request = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
            try await channel.writeAndFlush(ByteBuffer(string: request)).get()
            await server.waitForUpgradeRequests(1)
            await server.waitForUpgradesInProgress(1)
            try await channel.close().get()
            await server.waitForUpgradesInProgress(0)
            #expect(server.acceptedConnectionCount == 0)
        }
    }

    @Test("a frozen server: connecting times out and is retried, then recovers")
    func frozenServer() async throws {
        var configuration = RealtimeServer.Configuration(tokens: ["it-token"])
        configuration.faults.freeze = true
        try await withReferenceServer(configuration) { server, port in
            let session = Session(settings: try integrationSettings(port: port) { $0.connectTimeout(.milliseconds(300)) }, transport: NIOWebSocketTransport())
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor { $0.reason?.detail?.contains("connecting took longer") == true }
                server.updateFaults { $0.freeze = false }
                try await status.waitFor(.connected)
            }
        }
    }

    @Test("the admin endpoint changes faults from outside")
    func admin() async throws {
        try await withReferenceServer { server, port in
            let session = Session(settings: try integrationSettings(port: port), transport: NIOWebSocketTransport())
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                let answer = try await httpGet(port: port, path: "/admin/refuse?on=1")
                #expect(answer.contains("refuse=true"))
                #expect(server.faults.refuseConnections)
                _ = try await httpGet(port: port, path: "/admin/drop")
                try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
                _ = try await httpGet(port: port, path: "/admin/refuse?on=0")
                try await status.waitFor(.connected)
            }
        }
    }
}

@Suite("Recovery against the reference server over loopback", .timeLimit(.minutes(1)), .serialized)
struct RecoveryIntegrationTests {
    @Test("background → foreground with 20 subscriptions and 20 ms frames: replayed, caught up once and in order, outbox flushed")
    func recoveryEndToEnd() async throws {
        var configuration = RealtimeServer.Configuration(tokens: ["it-token"])
        configuration.faults.frameDelay = .milliseconds(20)
        try await withReferenceServer(configuration) { server, port in
            let lifecycle = LifecycleDriver()
            // Every answer waits 20 ms here: the harness's patience of 2 s a request is tight for
            // a recovery of twenty under a sanitizer with the whole suite beside it (it timed out
            // so twice). The test is about what arrives, not how soon.
            let settings = try integrationSettings(port: port) { $0.requestTimeout(.seconds(10)) }
            let session = Session(settings: settings, transport: NIOWebSocketTransport(), lifecycle: lifecycle)
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                var subscriptions: [Subscription] = []
                for index in 0..<20 { subscriptions.append(try await session.subscribe(to: "c\(index)")) }
                var reports = session.recoveryReports.makeAsyncIterator()
                await lifecycle.background()
                await server.waitForOpenConnections(0)
                for index in 0..<20 {
                    try server.publish("a", to: "c\(index)")
                    try server.publish("b", to: "c\(index)")
                }
                let queued = Task { try await session.publish("from the outbox", to: "c0") }
                for await count in session.outboxCountUpdates where count == 1 { break }
                await lifecycle.foreground()
                let report = try #require(await reports.next())
                #expect(report.trigger == .foreground)
                #expect(report.isComplete)
                #expect(report.caughtUp.values.reduce(0, +) == 40)
                #expect(report.outboxFlushed == 1)
                #expect(try await queued.value.sequence == 3)
                for subscription in subscriptions {
                    var messages = subscription.makeAsyncIterator()
                    #expect(try await messages.next()?.data == "a")
                    #expect(try await messages.next()?.data == "b")
                }
                // Iterators of one subscription share its stream: "a" and "b" are read already.
                var first = subscriptions[0].makeAsyncIterator()
                #expect(try await first.next()?.data == "from the outbox")
            }
        }
    }

    @Test("background refresh against the real server: connects, catches up, lets go")
    func refreshEndToEnd() async throws {
        try await withReferenceServer { server, port in
            let lifecycle = LifecycleDriver(initialState: .background)
            let session = Session(settings: try integrationSettings(port: port), transport: NIOWebSocketTransport(), lifecycle: lifecycle)
            try await withRunningSession(session, patience: .realServer) { _ in
                let room = try await session.subscribe(to: "room")
                let report = try await session.refresh(within: .seconds(5))
                #expect(report.trigger == .backgroundRefresh)
                #expect(report.steps.map(\.id) == [.connected, .authenticated, .subscription("room")])
                await server.waitForOpenConnections(0)
                #expect(session.status == .disconnected(.notStarted))
                try server.publish("later", to: "room")
                await lifecycle.foreground()
                var messages = room.makeAsyncIterator()
                #expect(try await messages.next()?.data == "later")
            }
        }
    }
}

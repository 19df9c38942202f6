import Foundation
import SDK
import SDKTesting
import Testing

@Suite("Session in Auto mode", .timeLimit(.minutes(1)))
struct SessionAutoModeTests {
    let server = TestServer(tokens: ["test-token"])
    let clock = TestClock()
    let lifecycle = LifecycleDriver()

    func makeSession(_ configure: (AppSettings.Builder) -> AppSettings.Builder = { $0 }) throws -> (Session, InMemoryTransport) {
        let transport = server.transport()
        let session = Session(settings: try .testing(auto: true, configure: configure), transport: transport, clock: clock, lifecycle: lifecycle)
        return (session, transport)
    }

    // Seed 004, Auto: launch connects by itself; background disconnects at once; foreground
    // reconnects and rejoins.
    @Test("launch connects by itself, background disconnects at once, foreground reconnects")
    func autoTable() async throws {
        let (session, transport) = try makeSession()
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            await lifecycle.background()
            #expect(session.status == .disconnected(.appBackgrounded))
            try await server.waitForOpenConnections(0)
            #expect(session.armedTimers == [], "no timer runs in the background in Auto mode")
            await lifecycle.foreground()
            try await status.waitFor(.connected)
            #expect(transport.openedConnectionCount == 2)
        }
        #expect(transport.openConnectionCount == 0)
        #expect(transport.doubleSocketAttempts == 0)
    }

    @Test("subscriptions rejoin after the foreground, and messages sent while away arrive once, in order")
    func rejoinAndCatchUp() async throws {
        let (session, _) = try makeSession()
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let subscription = try await session.subscribe(to: "room")
            var messages = subscription.makeAsyncIterator()
            try server.publish(["n": 1], to: "room")
            #expect(try await messages.next()?.sequence == 1)

            await lifecycle.background()
            try await server.waitForOpenConnections(0)
            try server.publish(["n": 2], to: "room")
            try server.publish(["n": 3], to: "room")
            await lifecycle.foreground()
            try await status.waitFor(.connected)
            await clock.settle()
            try #require(server.subscriberCount(of: "room") == 1, "the subscription was rejoined")
            #expect(try await messages.next()?.data == ["n": 2])
            #expect(try await messages.next()?.data == ["n": 3])
            try server.publish(["n": 4], to: "room")
            #expect(try await messages.next()?.sequence == 4)
            let resubscribe = server.receivedMessages.last { if case .subscribe = $0 { true } else { false } }
            #expect(resubscribe == .subscribe(id: resubscribe!.id, channel: "room", since: 1))
        }
    }

    @Test("disconnect() is sticky: background, foreground and network changes do not reconnect")
    func disconnectIsSticky() async throws {
        let network = ManualNetworkMonitor()
        let transport = server.transport()
        let session = Session(settings: try .testing(), transport: transport, clock: clock, lifecycle: lifecycle, network: network)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            await session.disconnect()
            #expect(session.status == .disconnected(.appRequested))
            await lifecycle.background()
            await lifecycle.foreground()
            await network.send(isReachable: false)
            await network.send(isReachable: true)
            #expect(session.status == .disconnected(.appRequested))
            #expect(transport.openedConnectionCount == 1)
            try await session.connect()
            #expect(session.status == .connected)
        }
    }

    @Test("100 rapid background/foreground flips: never two sockets, and it converges")
    func rapidFlips() async throws {
        let (session, transport) = try makeSession()
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            for _ in 0..<100 {
                await lifecycle.background()
                await lifecycle.foreground()
            }
            try await status.waitFor(.connected)
            try await server.waitForOpenConnections(1)
            #expect(transport.doubleSocketAttempts == 0)
            await lifecycle.background()
            try await server.waitForOpenConnections(0)
        }
        #expect(transport.openConnectionCount == 0)
        #expect(transport.doubleSocketAttempts == 0)
    }

    @Test("a lost working connection reconnects at once; failed attempts back off exactly")
    func reconnectWithBackoff() async throws {
        let backoff = Backoff(initial: .seconds(1), multiplier: 2, maximum: .seconds(30), jitter: 0)
        let (session, transport) = try makeSession { $0.reconnectBackoff(backoff) }
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            await clock.advance(by: .seconds(60))  // a working connection
            server.setRefusingConnections(true)
            server.dropAllConnections()
            // The immediate retry is refused; then 1 s, then 2 s.
            try await status.waitFor { if case .reconnecting(let reason) = $0 { reason.code == .error } else { false } }
            #expect(transport.openedConnectionCount == 1)
            #expect(transport.requestedURLs.count == 2, "the first connection and the immediate retry")
            await clock.advance(by: .milliseconds(999))
            #expect(transport.requestedURLs.count == 2)
            await clock.advance(by: .milliseconds(1))
            #expect(transport.requestedURLs.count == 3, "1 s after the first refusal")
            await clock.advance(by: .milliseconds(1_999))
            #expect(transport.requestedURLs.count == 3)
            server.setRefusingConnections(false)
            await clock.advance(by: .milliseconds(1))
            #expect(transport.requestedURLs.count == 4, "2 s after the second refusal")
            #expect(session.status == .connected)
            #expect(transport.openedConnectionCount == 2)
        }
    }

    @Test("a connection lost in the background (kept for the grace) is not retried there: no timer, no socket, until the foreground")
    func lossInBackgroundNotRetried() async throws {
        let (session, transport) = try makeSession { $0.backgroundGrace(.seconds(10)) }
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            await clock.advance(by: .seconds(60))  // a working connection, whose loss would be retried at once
            await lifecycle.background()
            #expect(session.status == .connected, "kept for the grace")
            server.dropAllConnections()
            await clock.settle()
            #expect(session.armedTimers == [], "no retry timer in the background")
            await clock.advance(by: .seconds(3600))
            #expect(transport.requestedURLs.count == 1)
            #expect(session.status != .connected)
            await lifecycle.foreground()
            try await status.waitFor(.connected, after: status.mark())
            #expect(transport.requestedURLs.count == 2)
        }
    }

    @Test("backgrounded during a reconnect: the retry is cancelled and never runs")
    func backgroundDuringReconnect() async throws {
        let (session, transport) = try makeSession()
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            // Dropped right after connecting: not a working connection, so a retry timer is armed.
            server.dropAllConnections()
            try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
            #expect(session.armedTimers == [.reconnect])
            await lifecycle.background()
            #expect(session.status == .disconnected(.appBackgrounded))
            #expect(session.armedTimers == [])
            await clock.advance(by: .seconds(3600))
            #expect(session.status == .disconnected(.appBackgrounded))
            #expect(transport.openedConnectionCount == 1)
        }
    }

    @Test("rejected credentials: a typed reason and no retry loop")
    func credentialsRejected() async throws {
        server.setRejectingCredentials(true)
        let (session, transport) = try makeSession()
        try await withRunningSession(session) { status in
            try await status.waitFor(.disconnected(DisconnectReason(.credentialsRejected, detail: "credentials rejected")))
            await clock.advance(by: .seconds(3600))
            await lifecycle.background()
            await lifecycle.foreground()
            #expect(transport.openedConnectionCount == 1)
            server.setRejectingCredentials(false)
            try await session.connect()
            #expect(session.status == .connected)
        }
    }

    @Test("a wrong token is rejected by the server and named as such")
    func wrongToken() async throws {
        let transport = server.transport()
        let session = Session(settings: try .testing(token: "wrong"), transport: transport, clock: clock, lifecycle: lifecycle)
        try await withRunningSession(session) { status in
            let seen = try await status.waitFor { if case .disconnected(let reason) = $0 { reason.code == .credentialsRejected } else { false } }
            #expect(!seen.description.contains("wrong"), "the token never appears in a status")
        }
    }

    @Test("a server that never answers the credentials times out and is retried")
    func connectTimeout() async throws {
        server.setFrozen(true)
        let (session, transport) = try makeSession { $0.connectTimeout(.seconds(5)).reconnectBackoff(Backoff(initial: .seconds(1), jitter: 0)) }
        try await withRunningSession(session) { status in
            try await status.waitFor(.connecting)
            try await server.waitForOpenConnections(1)
            await clock.advance(by: .seconds(5))
            try await status.waitFor { if case .reconnecting(let reason) = $0 { reason.code == .error } else { false } }
            server.setFrozen(false)
            await clock.advance(by: .seconds(1))
            try await status.waitFor(.connected)
            #expect(transport.openedConnectionCount == 2)
            #expect(transport.doubleSocketAttempts == 0)
        }
    }

    @Test("a garbage frame from the server ends the connection with a typed reason, and the session recovers")
    func garbageFrame() async throws {
        let (session, _) = try makeSession()
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            await clock.advance(by: .seconds(60))
            server.sendToAll(.text("{not json"))
            let seen = try await status.waitFor(.connected)
            guard case .reconnecting(let reason)? = seen.first else {
                Issue.record("expected reconnecting first, saw \(seen)")
                return
            }
            #expect(reason.code == .error)
            #expect(reason.detail?.contains("bad frame from server") == true)
        }
    }

    @Test("publish is acknowledged with its sequence number; with the outbox off, no connection throws")
    func publish() async throws {
        let (session, _) = try makeSession { $0.outboxLimit(0) }
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            #expect(try await session.publish(["text": "hi"], to: "room").sequence == 1)
            #expect(try await session.publish(["text": "again"], to: "room").sequence == 2)
            await lifecycle.background()
            do {
                _ = try await session.publish("late", to: "room")
                Issue.record("published without a connection and without an outbox")
            } catch let error as SessionError {
                #expect(error.code == .outboxFull)
            }
        }
    }

    @Test("an unanswered publish times out with a typed error")
    func publishTimeout() async throws {
        let (session, _) = try makeSession { $0.requestTimeout(.seconds(3)) }
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            server.setFrozen(true)
            try await confirmation { timedOut in
                async let result: UInt64? = session.publish("x", to: "room").sequence
                try await server.waitForMessages(2)  // authenticate, publish
                await clock.advance(by: .seconds(3))
                do {
                    _ = try await result
                } catch let error as SessionError where error.code == .timedOut {
                    timedOut()
                }
            }
        }
    }

    @Test("shutdown closes the socket and fails nothing silently")
    func shutdown() async throws {
        let (session, transport) = try makeSession()
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
        }
        #expect(session.status == .disconnected(.sessionEnded))
        #expect(transport.openConnectionCount == 0)
        await #expect(throws: SessionError.self) { try await session.ping() }
    }
}

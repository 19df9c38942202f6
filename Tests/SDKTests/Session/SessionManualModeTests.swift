import Foundation
import SDK
import SDKTesting
import Testing

@Suite("Session in Manual mode", .timeLimit(.minutes(1)))
struct SessionManualModeTests {
    let server = TestServer()
    let clock = TestClock()
    let lifecycle = LifecycleDriver()

    func makeSession(_ configure: (AppSettings.Builder) -> AppSettings.Builder = { $0 }) throws -> (Session, InMemoryTransport) {
        let transport = server.transport()
        let session = Session(settings: try .testing(auto: false, configure: configure), transport: transport, clock: clock, lifecycle: lifecycle)
        return (session, transport)
    }

    // Seed 004, Manual: connects only on connect(); in the background disconnects exactly
    // 30 s later unless ping() came within the window; each ping buys another 30 s.
    @Test("launch does not connect; connect() does")
    func connectOnlyWhenAsked() async throws {
        let (session, transport) = try makeSession()
        try await withRunningSession(session) { _ in
            await clock.advance(by: .seconds(60))
            #expect(session.status == .disconnected(.notStarted))
            #expect(transport.openedConnectionCount == 0)
            try await session.connect()
            #expect(session.status == .connected)
        }
    }

    @Test("background: disconnected exactly 30 s later")
    func watchdogAtThirtySeconds() async throws {
        let (session, _) = try makeSession()
        try await withRunningSession(session) { status in
            try await session.connect()
            await lifecycle.background()
            #expect(session.armedTimers == [.watchdog])
            await clock.advance(by: .milliseconds(29_999))
            #expect(session.status == .connected)
            await clock.advance(by: .milliseconds(1))
            try #require(session.status == .disconnected(.watchdogExpired))
            try await server.waitForOpenConnections(0)
            #expect(session.armedTimers == [])
        }
    }

    @Test("each ping() in the background buys another full 30 s")
    func pingExtends() async throws {
        let (session, _) = try makeSession()
        try await withRunningSession(session) { status in
            try await session.connect()
            await lifecycle.background()
            await clock.advance(by: .seconds(20))
            try await session.ping()
            await clock.advance(by: .seconds(29))  // 49 s in the background
            #expect(session.status == .connected)
            try await session.ping()
            await clock.advance(by: .milliseconds(29_999))  // 78.999 s
            #expect(session.status == .connected)
            await clock.advance(by: .milliseconds(1))
            #expect(session.status == .disconnected(.watchdogExpired))
        }
    }

    @Test("after the watchdog, foreground stays disconnected until connect()")
    func foregroundAfterWatchdog() async throws {
        let (session, transport) = try makeSession()
        try await withRunningSession(session) { status in
            try await session.connect()
            await lifecycle.background()
            await clock.advance(by: .seconds(30))
            try await status.waitFor(.disconnected(.watchdogExpired))
            await lifecycle.foreground()
            await clock.advance(by: .seconds(600))
            #expect(session.status == .disconnected(.watchdogExpired))
            #expect(transport.openedConnectionCount == 1)
            try await session.connect()
            #expect(transport.openedConnectionCount == 2)
        }
    }

    @Test("foreground before the watchdog cancels it and keeps the connection")
    func foregroundCancelsWatchdog() async throws {
        let (session, _) = try makeSession()
        try await withRunningSession(session) { _ in
            try await session.connect()
            await lifecycle.background()
            await clock.advance(by: .seconds(10))
            await lifecycle.foreground()
            #expect(session.armedTimers == [])
            await clock.advance(by: .seconds(600))
            #expect(session.status == .connected)
        }
    }

    @Test("the watchdog length comes from the settings")
    func configurableWatchdog() async throws {
        let (session, _) = try makeSession { $0.backgroundTimeout(.seconds(3)) }
        try await withRunningSession(session) { status in
            try await session.connect()
            await lifecycle.background()
            await clock.advance(by: .milliseconds(2_999))
            #expect(session.status == .connected)
            await clock.advance(by: .milliseconds(1))
            #expect(session.status == .disconnected(.watchdogExpired))
        }
    }

    @Test("ping() without a connection throws notConnected")
    func pingWithoutConnection() async throws {
        let (session, _) = try makeSession()
        try await withRunningSession(session) { _ in
            await #expect(throws: SessionError.self) { try await session.ping() }
        }
    }

    @Test("in the foreground a lost connection reconnects and rejoins its subscriptions")
    func foregroundLossReconnects() async throws {
        let (session, transport) = try makeSession()
        try await withRunningSession(session) { status in
            try await session.connect()
            try await status.waitFor(.connected)
            let subscription = try await session.subscribe(to: "news")
            await clock.advance(by: .seconds(60))
            server.dropAllConnections(code: nil, reason: "reset")
            try await status.waitFor(.reconnecting(DisconnectReason(.networkLost, detail: "reset")))
            try await status.waitFor(.connected)
            #expect(transport.openedConnectionCount == 2)
            try await server.waitForMessages(4)  // auth, subscribe, auth, subscribe
            #expect(server.subscriberCount(of: "news") == 1)
            withExtendedLifetime(subscription) {}
        }
    }

    @Test("replacing Manual with Auto at run time: the background then disconnects at once")
    func replacePolicy() async throws {
        let (session, _) = try makeSession()
        try await withRunningSession(session) { status in
            try await session.connect()
            await session.replacePolicy(AutoPolicy(jitter: .fixed(0)))
            #expect(session.policyName == "auto")
            #expect(session.status == .connected)
            await lifecycle.background()
            #expect(session.status == .disconnected(.appBackgrounded))
            await lifecycle.foreground()
            try await status.waitFor(.connected)
        }
    }

    @Test("a token never appears in a status, an error, a description or the settings")
    func tokenNeverLeaks() async throws {
        let secret = "s3cr3t-t0ken-value"
        let secretServer = TestServer(tokens: ["other"])
        let transport = secretServer.transport()
        let settings = try AppSettings.testing(auto: false, token: secret)
        let session = Session(settings: settings, transport: transport, clock: clock, lifecycle: lifecycle)
        var texts: [String] = [settings.description, String(reflecting: settings)]
        try await withRunningSession(session) { status in
            do {
                try await session.connect()
            } catch {
                texts.append(String(describing: error))
                texts.append(String(reflecting: error))
            }
            texts += await status.history.map { String(describing: $0) }
            texts += secretServer.receivedMessages.map { String(describing: $0) }
            texts += secretServer.receivedMessages.map { String(reflecting: $0) }
            // The one place besides `auth` it may go: the Authorization header (version 2).
            texts += transport.requestedHeaders.map { String(describing: $0.filter { $0.key != "Authorization" }) }
            #expect(transport.requestedHeaders.allSatisfy { $0["Authorization"] == "Bearer \(secret)" })
            texts += transport.requestedURLs.map(\.absoluteString)
        }
        #expect(texts.count > 6)
        for text in texts { #expect(!text.contains(secret), "leaked in: \(text)") }
        // …while it did go out on the wire, in the first message.
        #expect(secretServer.receivedMessages.first == .authenticate(id: 1, token: Secret(secret)))
    }
}

@Suite("Subscriptions", .timeLimit(.minutes(1)))
struct SubscriptionTests {
    @Test("dropping the last Subscription of a channel unsubscribes on the server")
    func dropUnsubscribes() async throws {
        let server = TestServer()
        let session = Session(settings: try .testing(), transport: server.transport(), clock: TestClock())
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            var subscription: Subscription? = try await session.subscribe(to: "news")
            #expect(server.subscriberCount(of: "news") == 1)
            #expect(subscription?.channel == "news")
            subscription = nil
            try await server.waitForMessages(3)  // auth, subscribe, unsubscribe
            #expect(server.subscriberCount(of: "news") == 0)
            #expect(session.subscribedChannels.isEmpty)
        }
    }

    @Test("an invalid channel name is a typed error")
    func invalidChannel() async throws {
        let session = Session(settings: try .testing(), transport: TestServer().transport(), clock: TestClock())
        await #expect(throws: SessionError.self) { _ = try await session.subscribe(to: "") }
    }

    @Test("subscribing while disconnected starts the subscription with the next connection")
    func subscribeOffline() async throws {
        let server = TestServer()
        let session = Session(settings: try .testing(auto: false), transport: server.transport(), clock: TestClock())
        try await withRunningSession(session) { _ in
            let subscription = try await session.subscribe(to: "later")
            #expect(server.subscriberCount(of: "later") == 0)
            try await session.connect()
            try await server.waitForMessages(2)
            #expect(server.subscriberCount(of: "later") == 1)
            try server.publish("hello", to: "later")
            var iterator = subscription.makeAsyncIterator()
            #expect(try await iterator.next()?.data == "hello")
        }
    }

    @Test("unsubscribe ends the stream")
    func unsubscribeEnds() async throws {
        let server = TestServer()
        let session = Session(settings: try .testing(), transport: server.transport(), clock: TestClock())
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let subscription = try await session.subscribe(to: "news")
            await session.unsubscribe(from: "news")
            var iterator = subscription.makeAsyncIterator()
            #expect(try await iterator.next() == nil)
        }
    }
}

@Suite("Host call cancellation", .timeLimit(.minutes(1)))
struct HostCallCancellationTests {
    @Test("a connect() whose task is cancelled stops waiting with CancellationError; the attempt goes on")
    func connectCancelled() async throws {
        let server = TestServer()
        server.setRefusingConnections(true)
        let session = Session(settings: try .testing(auto: false), transport: server.transport(), clock: TestClock())
        try await withRunningSession(session) { status in
            let waiter = Task { try await session.connect() }
            try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
            waiter.cancel()
            await #expect(throws: CancellationError.self) { try await waiter.value }
            #expect(session.armedTimers == [.reconnect])
        }
    }
}

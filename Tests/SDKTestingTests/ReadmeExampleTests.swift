import ConnectionPolicy
import Foundation
import SDK
import SDKTesting
import Testing

// The host-app tests the "Testing your app" article (SDKTesting's documentation, once the README's
// section) shows, verbatim: if this stops compiling or passing, the article is wrong (and
// ReadmeSourceTests fails when the two drift apart).
@Suite("README example", .timeLimit(.minutes(1)))
struct ReadmeExampleTests {
    @Test func backgroundDisconnectsForegroundReconnects() async throws {
        let server = TestServer(), lifecycle = LifecycleDriver()
        let session = Session(settings: try .testing(), transport: server.transport(), clock: TestClock(), lifecycle: lifecycle)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            await lifecycle.background()
            #expect(session.status == .disconnected(.appBackgrounded))
            await lifecycle.foreground()
            try await status.waitFor(.connected)
        }
    }

    @Test func aLostAcknowledgementIsSentAgainOnceAfterTheResubscribe() async throws {
        let server = TestServer(), clock = TestClock()
        let session = Session(settings: try .testing(), transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            let room = try await session.subscribe(to: "room")
            await clock.settle()
            server.loseNextPublishAcknowledgement()
            let call = Task { try await session.publish("once", to: "room") }
            try await status.waitFor(.reconnecting(.serverClosed("code 1001: dropped before the acknowledgement")))
            await clock.advance(by: .seconds(5))                      // the reconnect
            _ = try await call.value
            let again = server.requests(onConnection: 2)
            #expect(again.map(\.channel) == [nil, room.channel, room.channel])   // credentials, resubscribe, publish
            #expect(again.last == server.requests(onConnection: 1).last)      // the same publish, the same key
            #expect(server.latestSequence(of: "room") == 1)                   // applied once
        }
    }

    @Test func backgroundTimeIsHeldThenExpires() async throws {
        let time = TestBackgroundTime(), lifecycle = LifecycleDriver(initialState: .background)
        let session = Session(settings: try .testing(auto: false), transport: TestServer().transport(), clock: TestClock(), lifecycle: lifecycle, backgroundTime: time)
        try await withRunningSession(session) { status in
            try await session.connect()   // Manual, in the background: the time is held
            #expect(time.heldCount == 1)
            time.expireAll()              // iOS takes it back: closed in order, typed
            try await status.waitFor(.disconnected(.backgroundTimeExpired))
        }
    }

    @Test func manualWatchdogFiresAtThirtySecondsNotBefore() async throws {
        let clock = TestClock(), lifecycle = LifecycleDriver()
        let session = Session(settings: try .testing(auto: false), transport: TestServer().transport(), clock: clock, lifecycle: lifecycle)
        try await withRunningSession(session) { _ in
            try await session.connect()
            await lifecycle.background()
            await clock.advance(by: .milliseconds(29_999))
            #expect(session.status == .connected)                      // fails if the watchdog fired early
            await clock.advance(by: .milliseconds(1))
            #expect(session.status == .disconnected(.watchdogExpired)) // no waiting: it has happened
        }
    }

    @Test func backgroundThenForegroundCatchesUpThenNothingMore() async throws {
        let server = TestServer(), clock = TestClock(), lifecycle = LifecycleDriver()
        let session = Session(settings: try .testing(), transport: server.transport(), clock: clock, lifecycle: lifecycle)
        try await withRunningSession(session) { _ in
            let room = try await session.subscribe(to: "room")   // keep it: a dropped Subscription unsubscribes
            await clock.settle()                                   // connected and subscribed
            await lifecycle.background()
            #expect(session.status == .disconnected(.appBackgrounded) && session.armedTimers.isEmpty)
            try server.publish("missed", to: "room")
            await lifecycle.foreground()
            #expect(await clock.runUntilIdle() == .idle)           // resubscribed, caught up, nothing scheduled
            #expect(session.lastRecoveryReport?.caughtUp == [room.channel: 1] && server.acceptedConnectionCount == 2)
        }
    }

    @Test func customPolicyStaysConnectedInTheBackground() async throws {
        let server = TestServer(), clock = TestClock(), lifecycle = LifecycleDriver()
        let session = Session(settings: try .testing(), transport: server.transport(), clock: clock, lifecycle: lifecycle)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            await session.replacePolicy(StayConnected())
            await lifecycle.background()
            server.dropAllConnections()
            await clock.advance(by: .seconds(1))                 // the retry, armed on the way
            #expect(session.policyName == "stay-connected" && session.status == .connected)
        }
    }
}

struct StayConnected: SessionPolicy {
    var name: String { "stay-connected" }
    func start(in context: PolicyContext) -> [PolicyAction] { [.openConnection] }
    func lifecycleChanged(to state: AppLifecycleState) -> [PolicyAction] { [] }
    func connectRequested() -> [PolicyAction] { [.openConnection] }
    func disconnectRequested() -> [PolicyAction] { [.closeConnection(.appRequested)] }
    func pingRequested() -> [PolicyAction] { [] }
    func connectionOpened() -> [PolicyAction] { [] }
    func connectionLost(_ loss: ConnectionLoss) -> [PolicyAction] { [.armTimer(PolicyTimer(id: .reconnect, generation: 1), after: .seconds(1))] }
    func timerFired(_ timer: PolicyTimer) -> [PolicyAction] { [.openConnection] }
    func networkReachabilityChanged(isReachable: Bool) -> [PolicyAction] { isReachable ? [.openConnection] : [] }
}

/// The article's examples are these tests, verbatim: this one fails when they drift apart.
@Suite("README examples match the README")
struct ReadmeSourceTests {
    @Test func testsAreTheReadmesCode() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("Sources/SDKTesting/SDKTesting.docc/TestingYourApp.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let unindented = source.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasPrefix("    ") ? $0.dropFirst(4) : $0 }.joined(separator: "\n")
        for name in ["backgroundDisconnectsForegroundReconnects", "backgroundTimeIsHeldThenExpires", "backgroundThenForegroundCatchesUpThenNothingMore", "customPolicyStaysConnectedInTheBackground",
                     "aLostAcknowledgementIsSentAgainOnceAfterTheResubscribe"] {
            let start = try #require(readme.range(of: "@Test func \(name)()"), "\(name) is in the README")
            let end = try #require(readme.range(of: "```", range: start.upperBound..<readme.endIndex))
            let example = readme[start.lowerBound..<end.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
            // A block may hold the test and a type it uses: each must be here as it is there.
            let parts = example.components(separatedBy: "\n\nstruct ")
            #expect(unindented.contains(parts[0]), "\(name): not the README's code:\n\(parts[0])")
            for type in parts.dropFirst() {
                #expect(source.contains("struct " + type), "\(name): the README's type is not here:\n\(type)")
            }
        }
    }
}

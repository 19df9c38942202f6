import ConnectionPolicy
import SDK
import SDKTesting
import Testing

/// The diagnostics read like `status`: without `await`, so `#expect` takes them as they are;
/// timers typed.
@Suite("Session diagnostics", .timeLimit(.minutes(1)))
struct SessionTimerTests {
    @Test("policyName, appState, armedTimers, subscribedChannels, recoveryJournal and outboxCount, read without await, follow the session")
    func diagnostics() async throws {
        let server = TestServer(), clock = TestClock(), lifecycle = LifecycleDriver()
        let session = Session(settings: try .testing(auto: false), transport: server.transport(), clock: clock, lifecycle: lifecycle)
        #expect(session.policyName == "manual" && session.appState == .active && session.armedTimers.isEmpty)
        try await withRunningSession(session) { _ in
            try await session.connect()
            let news = try await session.subscribe(to: "news")
            #expect(session.subscribedChannels == ["news": .some(0)])
            #expect(session.recoveryJournal == [.connected, .authenticated, .subscription("news")])
            try server.publish("hi", to: "news")
            await clock.settle()
            #expect(session.subscribedChannels == ["news": .some(1)])
            await lifecycle.background()
            #expect(session.appState == .background)
            #expect(session.armedTimers == [.watchdog], "typed: \(session.armedTimers)")
            #expect(session.armedTimers.first?.kind == .policy)
            await session.unsubscribe(from: "news")
            #expect(session.subscribedChannels.isEmpty && session.recoveryJournal == [.connected, .authenticated])
            await session.replacePolicy(AutoPolicy())
            #expect(session.policyName == "auto")
            #expect(session.outboxCount == 0)
            _ = news
        }
    }

    @Test("the names logs show, and the order armedTimers lists them in")
    func names() {
        #expect(SessionTimer.watchdog.description == "watchdog" && SessionTimer.backgroundGrace.name == "background-grace")
        #expect(SessionTimer.protocolTimer("mqtt-keepalive") == SessionTimer(.protocolTimer, name: "mqtt-keepalive"))
        #expect([SessionTimer.watchdog, .heartbeat, .reconnect].sorted() == [.heartbeat, .reconnect, .watchdog])
    }
}

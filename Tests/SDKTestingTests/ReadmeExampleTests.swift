import SDK
import SDKTesting
import Testing

// The host-app tests the README shows, verbatim: if this stops compiling or passing, the README
// is wrong.
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
}

import Foundation
import SDK
import SDKTesting
import Testing

@Suite("Session: app state reported without waiting", .timeLimit(.minutes(1)))
struct SessionReportAppStateTests {
    @Test("reportAppState (SwiftUI's onChange) applies the states in the order reported, before run() too")
    func reportedInOrder() async throws {
        let server = TestServer()
        let decisions = Locked([String]())
        let allFour = OneShot()
        let settings = try AppSettings.testing {
            $0.logging(minimumLevel: .debug) { record in
                guard record.message.hasPrefix("policy auto: app is") else { return }
                let count = decisions.withLock { list in
                    list.append(record.message.components(separatedBy: " → ")[0])
                    return list.count
                }
                if count == 4 { allFour.fire() }
            }
        }
        let session = Session(settings: settings, transport: server.transport(), clock: TestClock())
        // Reported before run(): they wait in the session's input, in order.
        for state in [AppLifecycleState.background, .active, .inactive, .background] { session.reportAppState(state) }
        try await withRunningSession(session) { status in
            await allFour.wait()
            #expect(decisions.withLock { $0 } == ["policy auto: app is background", "policy auto: app is active",
                                                  "policy auto: app is inactive", "policy auto: app is background"])
            #expect(session.appState == .background)
            try await status.waitFor(.disconnected(.appBackgrounded))
        }
    }
}

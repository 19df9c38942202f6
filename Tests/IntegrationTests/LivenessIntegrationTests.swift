import NIOCore
import NIOPosix
import NIOTransport
import ReferenceServer
import SDK
import SDKTesting
import Testing

@Suite("Liveness against the reference server", .timeLimit(.minutes(1)))
struct LivenessIntegrationTests {
    @Test("a frozen server (half-open) is found by the heartbeat and the session reconnects when it thaws")
    func halfOpenDetection() async throws {
        try await withReferenceServer { server, port in
            let settings = try integrationSettings(port: port) { $0.heartbeat(interval: .milliseconds(200), timeout: .milliseconds(200)) }
            let session = Session(settings: settings, transport: NIOWebSocketTransport())
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                server.updateFaults { $0.freeze = true }
                let frozenAt = ContinuousClock.now
                try await status.waitFor { $0.reason?.detail?.contains("half-open") == true }
                let detection = ContinuousClock.now - frozenAt
                // The promise: a ping within the interval, its pong missed within the timeout —
                // 400 ms at most; plus 2 s of slack for scheduling on a loaded 2-core machine
                // under a sanitizer (a detector 10× slower than promised would fail).
                #expect(detection <= .milliseconds(400) + .seconds(2), "half-open detected after \(detection) (heartbeat 200 ms + timeout 200 ms)")
                server.updateFaults { $0.freeze = false }
                try await status.waitFor(.connected)
            }
        }
    }
}

import NIOTransport
import ReferenceServer
import SDK
import SDKTesting
import Testing

/// Bursts larger than what the session's funnel and the NIO transport hold unread (1 MiB each):
/// reading from the socket pauses and resumes as the session catches up, and every message
/// arrives, in order. (Each burst stays under the reference server's own limit for a slow
/// reader, 8 MiB queued, past which it closes the connection — what TCP's flow control hands it.)
@Suite("Inbound flow: bounded buffers, nothing lost", .timeLimit(.minutes(1)))
struct InboundFlowIntegrationTests {
    @Test("six bursts of 1.5 MB through the NIO transport and the session: every message, in order, none lost")
    func burstsLargerThanTheBuffers() async throws {
        try await withReferenceServer { server, port in
            let session = Session(settings: try integrationSettings(port: port), transport: NIOWebSocketTransport())
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                let flood = try await session.subscribe(to: "flood")
                var messages = flood.makeAsyncIterator()
                let text = JSONValue.string(String(repeating: "x", count: 1_000))
                var expected: UInt64 = 1
                for _ in 0..<6 {
                    try server.publish(text, to: "flood", count: 1_500)
                    for _ in 0..<1_500 {
                        let message = try await messages.next()
                        try #require(message?.sequence == expected, "in order, none skipped: \(String(describing: message?.sequence)) for \(expected)")
                        expected += 1
                    }
                }
                #expect(expected == 9_001)
            }
        }
    }
}

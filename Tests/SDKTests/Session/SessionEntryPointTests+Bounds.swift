import SDK
import SDKTesting
import Testing

/// A bound checked at more than one entry point is pinned at its edge at each of them.
extension SessionEntryPointTests {
    @Test("a channel name is 1 to 256 bytes at every entry point that takes one: subscribe and publish accept 256 and refuse 257 and 0, typed")
    func channelNameBoundAtEachEntryPoint() async throws {
        let server = TestServer()
        let session = Session(settings: try .testing(), transport: server.transport(), clock: TestClock())
        let longest = String(repeating: "c", count: 256), tooLong = String(repeating: "c", count: 257)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            _ = try await session.subscribe(to: longest)
            #expect(try await session.publish("at the edge", to: longest).isAcknowledged)
            for name in [tooLong, ""] {
                let subscribing = await #expect(throws: SessionError.self) { try await session.subscribe(to: name) }
                #expect(subscribing?.code == .invalidArgument, "subscribe, \(name.utf8.count) bytes")
                let publishing = await #expect(throws: SessionError.self) { try await session.publish("past it", to: name) }
                #expect(publishing?.code == .invalidArgument, "publish, \(name.utf8.count) bytes")
            }
        }
    }
}

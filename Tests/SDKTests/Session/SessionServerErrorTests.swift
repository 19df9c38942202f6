import SDK
import SDKTesting
import Testing

/// Review items 9.2 and 9.5: a publish the protocol cannot carry fails at once as
/// `encodingFailed`; an error the server attributes to a request fails that request at once.
/// Nothing here advances the test clock, so a call that waited for its timeout would hang
/// (and the time limit would fail the test).
@Suite("Session: refused requests fail at once", .timeLimit(.minutes(1)))
struct SessionServerErrorTests {
    func nested(_ levels: Int) -> JSONValue {
        (0..<levels).reduce(JSONValue.null) { inner, _ in .array([inner]) }
    }

    @Test("a publish nested 40 levels fails at once with encodingFailed, connected or not")
    func tooDeepPublish() async throws {
        let server = TestServer(tokens: ["test-token"])
        let session = Session(settings: try .testing(), transport: server.transport(), clock: TestClock())
        let error = await #expect(throws: SessionError.self) { _ = try await session.publish(nested(40), to: "room") }
        #expect(error?.code == .encodingFailed)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let error = await #expect(throws: SessionError.self) { _ = try await session.publish(nested(40), to: "room") }
            #expect(error?.code == .encodingFailed)
            #expect(server.receivedMessages.count == 1, "only the auth went out")
        }
    }

    @Test("a stricter server's error names the publish, which fails at once with the server's error")
    func serverErrorFailsTheRequest() async throws {
        let server = TestServer(tokens: ["test-token"], retention: 1000, codec: JSONWireCodec(maxDepth: 8), speaksVersion2: false)
        let session = Session(settings: try .testing(), transport: server.transport(), clock: TestClock())
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let error = await #expect(throws: SessionError.self) { _ = try await session.publish(nested(10), to: "room") }
            #expect(error?.code == .rejected)
            #expect(error?.serverError?.code == "bad_request")
            #expect(session.status == .connected, "the connection stays")
            #expect(try await session.publish("fine", to: "room").sequence == 1)
        }
    }
}

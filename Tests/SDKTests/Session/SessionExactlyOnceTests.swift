import SDK
import SDKTesting
import Testing

/// The review's last PROTOCOL.md point: a publish whose acknowledgement was lost is re-sent with
/// the same key after the reconnect, and the server applies it once.
@Suite("Session: exactly-once publishing", .timeLimit(.minutes(1)))
struct SessionExactlyOnceTests {
    let server = TestServer(tokens: ["test-token"])
    let clock = TestClock()

    func publishes() -> [ClientMessage] {
        server.receivedMessages.filter { if case .publish = $0 { true } else { false } }
    }

    @Test("an acknowledgement lost with the connection: re-sent with the same key, applied once, the call returns the first number")
    func lostAcknowledgement() async throws {
        let session = Session(settings: try .testing(), transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            server.loseNextPublishAcknowledgement()
            let call = Task { try await session.publish("once", to: "room") }
            try await status.waitFor(.reconnecting(DisconnectReason.serverClosed("code 1001: dropped before the acknowledgement")))
            #expect(server.latestSequence(of: "room") == 1, "the server applied it")
            await clock.advance(by: .seconds(5))  // the retry's backoff, well within the outbox timeout
            #expect(try await call.value.sequence == 1)
            #expect(server.latestSequence(of: "room") == 1, "not applied twice")
            let sent = publishes()
            #expect(sent.count == 2)
            guard case .publish(_, _, _, let first)? = sent.first, case .publish(_, _, _, let second)? = sent.last else { return }
            #expect(first != nil && first == second, "the same key both times")
        }
    }

    @Test("once sent, a publish is not withdrawn: its task cancelled while it waits to be re-sent, it still goes again with its key and returns its receipt")
    func sentPublishNotWithdrawn() async throws {
        let session = Session(settings: try .testing(), transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            server.loseNextPublishAcknowledgement()
            server.setRefusingConnections(true)
            let call = Task { try await session.publish("once", to: "room") }
            try await status.waitFor(.reconnecting(DisconnectReason.serverClosed("code 1001: dropped before the acknowledgement")))
            await clock.settle()
            #expect(session.outboxCount == 1, "back in the outbox, to be re-sent")
            call.cancel()
            await clock.settle()
            #expect(session.outboxCount == 1, "the server may have applied it: not withdrawn")
            server.setRefusingConnections(false)
            await clock.advance(by: .seconds(5))  // the retry's backoff, well within the outbox timeout
            let receipt = await call.result
            #expect((try? receipt.get())?.sequence == 1, "the first number, not CancellationError: \(receipt)")
            #expect(server.latestSequence(of: "room") == 1, "applied once")
            #expect(publishes().count == 2)
        }
    }

    @Test("every publish carries its own key")
    func keysAreUnique() async throws {
        let session = Session(settings: try .testing(), transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            for n in 1...20 { _ = try await session.publish(JSONValue(n), to: "room") }
            let keys = publishes().compactMap { message -> String? in
                if case .publish(_, _, _, let key) = message { key } else { nil }
            }
            #expect(keys.count == 20)
            #expect(Set(keys).count == 20)
        }
    }

    @Test("a sent publish whose re-send never finds a connection ends with connectionLost, not timedOut")
    func sentThenNoConnection() async throws {
        let session = Session(settings: try .testing(auto: false) { $0.outboxTimeout(.seconds(5)) }, transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            try await session.connect()
            server.loseNextPublishAcknowledgement()
            let call = Task { try await session.publish("maybe", to: "room") }
            try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
            await session.disconnect()
            await clock.advance(by: .seconds(6))
            let error = await #expect(throws: SessionError.self) { try await call.value }
            #expect(error?.code == .connectionLost)
        }
    }
}

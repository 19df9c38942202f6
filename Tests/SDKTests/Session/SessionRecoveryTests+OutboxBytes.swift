import SDK
import SDKTesting
import Testing

extension SessionRecoveryTests {
    @Test("the outbox is bounded in bytes too: a publish whose data would pass outboxByteLimit throws outboxFull at once; the ones queued still complete, and room comes back as they go")
    func outboxByteBound() async throws {
        let server = TestServer()
        // "xxxxxxxxxx" is 12 bytes as JSON text: two fit in 30, a third does not.
        let session = try makeSession(server) { $0.outboxByteLimit(30) }
        let ten = JSONValue.string(String(repeating: "x", count: 10))
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            await lifecycle.background()
            try await withThrowingTaskGroup(of: UInt64.self) { group in
                group.addTask { try await session.publish(ten, to: "room").sequence ?? 0 }
                try await session.waitForOutboxCount(1)
                group.addTask { try await session.publish(ten, to: "room").sequence ?? 0 }
                try await session.waitForOutboxCount(2)
                let third = Task { try await session.publish(ten, to: "room") }
                await clock.settle()
                #expect(session.outboxCount == 2, "nothing of the refused one queued")
                await lifecycle.foreground()
                var sequences: [UInt64] = []
                for try await sequence in group { sequences.append(sequence) }
                #expect(sequences.sorted() == [1, 2])
                let full = await #expect(throws: SessionError.self) { try await third.value }
                #expect(full?.code == .outboxFull && full?.message.contains("24 bytes") == true, "\(String(describing: full))")
            }
            await lifecycle.background()
            _ = Task { try await session.publish(ten, to: "room") }
            try await session.waitForOutboxCount(1)
            _ = status
        }
    }

    @Test("outboxByteLimit is 0 to 1 GiB; 0 makes every publish without a connection throw")
    func outboxByteLimitRange() throws {
        let builder = AppSettings.Builder().serverURL("wss://example.com/")
        #expect(throws: SettingsError.self) { try builder.outboxByteLimit(-1).build() }
        #expect(throws: SettingsError.self) { try builder.outboxByteLimit((1 << 30) + 1).build() }
        #expect(try builder.outboxByteLimit(0).build().outboxByteLimit == 0)
        #expect(try builder.outboxByteLimit(1 << 30).build().outboxByteLimit == 1 << 30)
        #expect(try builder.build().outboxByteLimit == 4 << 20, "the default")
    }
}

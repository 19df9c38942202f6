import SDK
import SDKTesting
import Testing

extension SessionStoreTests {
    @Test("compaction: after many appends the store is written whole in a few records, and a relaunch reads the same state from it")
    func compaction() async throws {
        let server = TestServer()
        let store = InMemorySessionStore()
        let lifecycle = LifecycleDriver()
        let first = try launch(server, store, lifecycle: lifecycle)
        try await withRunningSession(first) { status in
            try await status.waitFor(.connected)
            let room = try await first.subscribe(to: "room")
            // Each publish is two records (made, then forgotten once acknowledged): 1,200 in all.
            for burst in 0..<12 {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 1...50 { group.addTask { _ = try await first.publish(JSONValue(burst * 50 + index), to: "room") } }
                    try await group.waitForAll()
                }
            }
            #expect(store.writeCounts.replaces >= 1, "written whole once the appends outgrew the state")
            await lifecycle.background()
            _ = Task { try await first.publish("after the compaction", to: "room") }
            try await first.waitForOutboxCount(1)
            await clock.settle()
            #expect(store.records.count < 600, "the history replaced by the state: \(store.records.count) records for 1,200 changes")
            store.kill()
            _ = room
        }
        let second = try launch(server, store.relaunched())
        try await withRunningSession(second) { status in
            let room = try await second.subscribe(to: "room")
            #expect(await second.earlierPublishes.map(\.data) == ["after the compaction"], "the one waiting, and none of the 600 acknowledged")
            try await status.waitFor(.connected)
            // The app read none of the 600: they come again, flagged, then the one made offline.
            let messages = PatientReader(messagesOf: room)
            var again: [UInt64] = []
            while let message = await messages.next(), message.data != "after the compaction" {
                if message.isRedelivery, let sequence = message.sequence { again.append(sequence) }
            }
            #expect(again == Array(1...600), "every one handed to the killed launch, flagged, in order")
        }
    }
}

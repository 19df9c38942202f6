import ConnectionPolicy
@testable import SDK
import SDKTesting
import Testing

extension SessionStoreTests {
    @Test("a subscriber held back and caught up, with a store: what it got again counts once, so the relaunch resumes from where both finished")
    func heldBackSubscriberDecidesTheResume() async throws {
        let server = TestServer()
        let store = InMemorySessionStore()
        let first = Session(settings: try .testing { $0.store(store).subscriberBufferLimit(2) }, transport: server.transport(), clock: clock)
        try await withRunningSession(first) { status in
            try await status.waitFor(.connected)
            let fast = try await first.subscribe(to: "room")
            let slow = try await first.subscribe(to: "room")
            var fastReading = fast.makeAsyncIterator()
            for n in 1...4 {
                _ = try server.publish(JSONValue(n), to: "room")
                #expect(try await fastReading.next()?.data == JSONValue(n))
            }
            var slowReading = slow.makeAsyncIterator()
            for n in 1...4 { #expect(try await slowReading.next()?.data == JSONValue(n), "held back at 3, caught up") }
            _ = try server.publish(5, to: "room")
            _ = try server.publish(6, to: "room")
            for n in 5...6 {
                #expect(try await fastReading.next()?.data == JSONValue(n))
                #expect(try await slowReading.next()?.data == JSONValue(n))
            }
            await clock.settle()
            store.kill()  // both finished 1 to 5
        }
        let second = Session(settings: try .testing { $0.store(store.relaunched()) }, transport: server.transport(), clock: clock)
        try await withRunningSession(second) { status in
            let room = try await second.subscribe(to: "room")
            try await status.waitFor(.connected)
            let reading = PatientReader(messagesOf: room)
            let message = await reading.next()
            #expect(message?.data == 6 && message?.isRedelivery == true, "from where both finished: \(String(describing: message))")
        }
    }
}

import ConnectionPolicy
@testable import SDK
import SDKTesting
import Testing

/// The FlowControl article's promises at their edges (docs/MUTANTS.md lists each sentence beside
/// its test).
extension SubscriberTests {
    @Test("a subscriber held back that reads once and then stops is still ended: the check that saw its progress arms the next one, which finds none")
    func readsOnceThenStops() async throws {
        let server = TestServer()
        let settings = try AppSettings.testing { $0.subscriberBufferLimit(3).subscriberStallTimeout(.seconds(10)) }
        let session = Session(settings: settings, transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            for n in 1...4 {
                try server.publish(JSONValue(n), to: "room")
                await clock.settle()
            }
            #expect(session.armedTimers.contains(.subscriberStall), "held back at 3 unread")
            var messages = room.makeAsyncIterator()
            #expect(try await messages.next()?.data == 1, "one read: two unread, above half of 3")
            await clock.advance(by: .seconds(10))
            #expect(session.armedTimers.contains(.subscriberStall), "the first check saw progress: the next one is armed")
            await clock.advance(by: .seconds(10))
            let rest = PatientReader(rest: messages)
            for n in 2...3 { #expect(await rest.nextData() == JSONValue(n), "what it held") }
            let error = await rest.nextError()
            #expect(error?.code == .subscriberTooSlow, "nothing read since the check before: stopped (\(String(describing: error)))")
        }
    }

    @Test("a subscriber held back by bytes resumes only once it has read down to half of the byte bound too, not at half of the count alone")
    func heldBackByBytesResumesAtHalf() async throws {
        let server = TestServer()
        let settings = try AppSettings.testing { $0.subscriberBufferLimit(1000).subscriberBufferBytes(4096) }
        let session = Session(settings: settings, transport: server.transport(), clock: clock)
        let kilobyte = JSONValue.string(String(repeating: "x", count: 1000))
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            for _ in 1...5 {
                try server.publish(kilobyte, to: "room")
                await clock.settle()
            }
            #expect(server.subscriberCount(of: "room") == 0, "4 KB unread and a fifth: held back, the channel left")
            var messages = room.makeAsyncIterator()
            #expect(try await messages.next()?.sequence == 1)
            await clock.settle()
            #expect(server.subscriberCount(of: "room") == 0, "about 3 KB still unread: above half of 4 KB, still held back")
            #expect(try await messages.next()?.sequence == 2)
            await clock.settle()
            #expect(server.subscriberCount(of: "room") == 1, "about 2 KB unread: at half of both bounds, caught up")
            let rest = PatientReader(rest: messages)
            for sequence in 3...5 { #expect(await rest.nextSequence() == UInt64(sequence), "every message, once, in order") }
        }
    }
}

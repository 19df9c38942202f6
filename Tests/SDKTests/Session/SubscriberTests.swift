import ConnectionPolicy
@testable import SDK
import SDKTesting
import Testing

/// A subscriber that stops reading costs a bounded buffer: past `subscriberBufferLimit` unread
/// messages it gets what it holds, then `subscriberTooSlow`; the channel's other subscribers,
/// and the session, go on.
@Suite("Session: a subscriber that stops reading", .timeLimit(.minutes(1)))
struct SubscriberTests {
    let clock = TestClock()

    @Test("past the limit the slow subscriber gets what it holds, then subscriberTooSlow naming its last message; a reader that keeps up goes on")
    func slowSubscriberEnds() async throws {
        let server = TestServer()
        let session = Session(settings: try .testing { $0.subscriberBufferLimit(3) }, transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let slow = try await session.subscribe(to: "room")
            let reader = try await session.subscribe(to: "room")
            var reading = reader.makeAsyncIterator()
            for n in 1...5 {
                try server.publish(JSONValue(n), to: "room")
                #expect(try await reading.next()?.data == JSONValue(n), "the reader that keeps up gets every message")
            }
            #expect(server.subscriberCount(of: "room") == 1, "the channel stays: another subscriber holds it")
            var behind = slow.makeAsyncIterator()
            for n in 1...3 { #expect(try await behind.next()?.data == JSONValue(n)) }
            do {
                _ = try await behind.next()
                Issue.record("the slow subscriber was not ended")
            } catch let error as SessionError {
                #expect(error.code == .subscriberTooSlow)
                #expect(error.message.contains("room") && error.message.contains("more than 3") && error.message.contains("sequence 3"), "\(error)")
            }
            try server.publish(6, to: "room")
            #expect(try await reading.next()?.data == 6)
        }
    }

    @Test("a slow last subscriber is let go on the server too; a reader that drains in time is never ended")
    func lastSlowSubscriberLeaves() async throws {
        let server = TestServer()
        let session = Session(settings: try .testing { $0.subscriberBufferLimit(3) }, transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            var messages = room.makeAsyncIterator()
            // Three unread at a time, drained each time: never more than the limit.
            for round in 0..<3 {
                for n in 1...3 { try server.publish(JSONValue(round * 3 + n), to: "room") }
                await clock.settle()
                for n in 1...3 { #expect(try await messages.next()?.data == JSONValue(round * 3 + n)) }
            }
            for n in 10...13 { try server.publish(JSONValue(n), to: "room") }
            await clock.settle()
            #expect(server.subscriberCount(of: "room") == 0, "its last subscriber gone, the channel is left")
            #expect(session.subscribedChannels["room"] == nil)
            for n in 10...12 { #expect(try await messages.next()?.data == JSONValue(n)) }
            await #expect(throws: SessionError.self) { _ = try await messages.next() }
        }
    }
}

extension SubscriberTests {
    @Test("a subscriber that holds nothing unread takes a read's batch however large; holding it, the next message past the limit ends it")
    func drainedSubscriberTakesALargeBatch() async throws {
        let codec = JSONWireCodec()
        func message(_ sequence: UInt64) -> TransportEvent {
            .frame(try! codec.encode(.message(ChannelMessage(channel: "room", sequence: sequence, data: JSONValue(Int(sequence))))))
        }
        let transport = SessionEventBatchTests.BatchTransport()
        let settings = try AppSettings.testing(auto: false) { $0.serverProtocol(.tether(handshake: .afterAuthentication)).subscriberBufferLimit(3) }
        let session = Session(settings: settings, transport: transport, clock: clock, lifecycle: LifecycleDriver())
        try await withRunningSession(session) { _ in
            var opened = transport.opened.makeAsyncIterator()
            var sent = transport.sent.makeAsyncIterator()
            let connecting = Task { try await session.connect() }
            let connection = try #require(await opened.next())
            _ = await sent.next()  // auth
            connection.push([.frame(try codec.encode(.ack(Ack(id: 1))))])
            try await connecting.value
            let subscribing = Task { try await session.subscribe(to: "room") }
            _ = await sent.next()  // subscribe
            connection.push([.frame(try codec.encode(.ack(Ack(id: 2, sequence: 0))))])
            let room = try await subscribing.value
            var batches = room.batches.makeAsyncIterator()
            // One read of five: more than the limit, to a subscriber that holds nothing — taken.
            connection.push((1...5).map(message))
            // Holding those five unread, the next message is past the limit: it ends. (Nothing
            // is read until both reads were handled, in order, whatever the timing.)
            connection.push([message(6)])
            #expect(try await batches.next()?.compactMap(\.sequence) == [1, 2, 3, 4, 5])
            await #expect(throws: SessionError.self) { _ = try await batches.next() }
        }
    }
}

import ConnectionPolicy
@testable import SDK
import SDKTesting
import Testing

/// A subscriber that reads slower than its channel costs a bounded buffer and loses nothing:
/// at `subscriberBufferLimit` unread it is held back, and once it has read half of them it is
/// caught up from the last message it got (Tether's protocol); the channel's other subscribers,
/// and the session, go on. One that stops reading ends with `subscriberTooSlow`.
@Suite("Session: a subscriber that reads slowly, or stops", .timeLimit(.minutes(1)))
struct SubscriberTests {
    let clock = TestClock()

    @Test("past its bound a slow subscriber is held back while a reader that keeps up goes on; read down to half, it is caught up from its last message: every message, in order, once, for both")
    func slowSubscriberCaughtUp() async throws {
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
            #expect(server.subscriberCount(of: "room") == 1, "the channel stays: another subscriber reads it")
            let behind = PatientReader(rest: slow.makeAsyncIterator())
            for n in 1...5 { #expect(await behind.nextData() == JSONValue(n), "held back at 3, caught up with 4 and 5") }
            try server.publish(6, to: "room")
            #expect(try await reading.next()?.data == 6, "the reader got 4 and 5 once: the catch-up was not its")
            #expect(await behind.nextData() == 6)
            #expect(server.subscriberCount(of: "room") == 1)
        }
    }

    @Test("a channel's only subscriber held back: the channel is left on the server meanwhile, and subscribed again from its last message once it has read down")
    func lastSlowSubscriberLeavesAndComesBack() async throws {
        let server = TestServer()
        let session = Session(settings: try .testing { $0.subscriberBufferLimit(3) }, transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            var messages = room.makeAsyncIterator()
            // Three unread at a time, read each time: never past the bound.
            for round in 0..<2 {
                for n in 1...3 { try server.publish(JSONValue(round * 3 + n), to: "room") }
                await clock.settle()
                for n in 1...3 { #expect(try await messages.next()?.data == JSONValue(round * 3 + n)) }
            }
            #expect(server.subscriberCount(of: "room") == 1)
            for n in 7...10 { try server.publish(JSONValue(n), to: "room") }
            await clock.settle()
            #expect(server.subscriberCount(of: "room") == 0, "held back, the channel's only subscriber: left on the server")
            #expect(session.subscribedChannels["room"] != nil, "still the app's")
            for n in 11...12 { try server.publish(JSONValue(n), to: "room") }
            let rest = PatientReader(rest: messages)
            for n in 7...12 { #expect(await rest.nextData() == JSONValue(n), "every message, in order, once") }
            #expect(server.subscriberCount(of: "room") == 1, "subscribed again")
        }
    }

    @Test("a subscriber held back that reads nothing for the stall timeout stopped reading: it gets what it holds, then subscriberTooSlow; one that reads, however slowly, is never ended")
    func stoppedReaderEnds() async throws {
        let server = TestServer()
        let settings = try AppSettings.testing { $0.subscriberBufferLimit(4).subscriberStallTimeout(.seconds(10)) }
        let session = Session(settings: settings, transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let stopped = try await session.subscribe(to: "room")
            let slow = try await session.subscribe(to: "lobby")
            var slowly = slow.makeAsyncIterator()
            for n in 1...5 {
                try server.publish(JSONValue(n), to: "room")
                try server.publish(JSONValue(n), to: "lobby")
                await clock.settle()
            }
            #expect(session.armedTimers.contains(.subscriberStall))
            // The lobby's reader takes one message per stall interval: it makes progress.
            for n in 1...3 {
                #expect(try await slowly.next()?.data == JSONValue(n))
                await clock.advance(by: .seconds(10))
            }
            let held = PatientReader(rest: stopped.makeAsyncIterator())
            for n in 1...4 { #expect(await held.nextData() == JSONValue(n), "what it held") }
            let error = await held.nextError()
            #expect(error?.code == .subscriberTooSlow)
            #expect(error?.message.contains("room") == true && error?.message.contains("stopped reading") == true && error?.message.contains("sequence 4") == true, "\(String(describing: error))")
            #expect(server.subscriberCount(of: "room") == 0, "its channel let go")
            for n in 4...5 { #expect(try await slowly.next()?.data == JSONValue(n), "the slow reader was caught up, not ended") }
        }
    }

    @Test("a catch-up past what the server still holds (its retention) ends the subscriber with subscriberFellBehind, after what it holds")
    func catchUpPastRetention() async throws {
        let server = TestServer(retention: 2)
        let session = Session(settings: try .testing { $0.subscriberBufferLimit(2) }, transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            for n in 1...3 {
                try server.publish(JSONValue(n), to: "room")
                await clock.settle()
            }
            for n in 4...8 { try server.publish(JSONValue(n), to: "room") }
            let messages = PatientReader(rest: room.makeAsyncIterator())
            for n in 1...2 { #expect(await messages.nextData() == JSONValue(n)) }
            let error = await messages.nextError()
            #expect(error?.code == .subscriberFellBehind && error?.message.contains("retention") == true, "\(String(describing: error))")
        }
    }
}

extension SubscriberTests {
    @Test("a subscriber that holds nothing unread takes a read's batch however large; holding it, the next message holds it back: the channel is left, then subscribed again from its last message once it has read")
    func drainedSubscriberTakesALargeBatch() async throws {
        let codec = JSONWireCodec()
        func message(_ sequence: UInt64) -> TransportEvent {
            .frame(try! codec.encode(.message(ChannelMessage(channel: "room", sequence: sequence, data: JSONValue(Int(sequence))))))
        }
        let transport = SessionEventBatchTests.BatchTransport()
        let settings = try AppSettings.testing(auto: false) { $0.serverProtocol(.tether(handshake: .afterAuthentication)).subscriberBufferLimit(3) }
        let session = Session(settings: settings, transport: transport, clock: clock, lifecycle: LifecycleDriver())
        try await withRunningSession(session) { _ in
            // Every wait gives up after its patience, naming what it waited for: a broken bound
            // fails this test in seconds, not at the suite's time limit.
            let opened = PatientReader(transport.opened)
            let sent = PatientReader(transport.sent)
            let connecting = Task { try await session.connect() }
            let connection = try #require(await opened.next(), "the connection opened")
            _ = try #require(await sent.next(), "the auth frame")
            connection.push([.frame(try codec.encode(.ack(Ack(id: 1))))])
            try await connecting.value
            let subscribing = Task { try await session.subscribe(to: "room") }
            _ = try #require(await sent.next(), "the subscribe")
            connection.push([.frame(try codec.encode(.ack(Ack(id: 2, sequence: 0))))])
            let room = try await subscribing.value
            // One read of five: more than the bound, to a subscriber that holds nothing — taken.
            connection.push((1...5).map(message))
            // Holding those five unread, the next message is past the bound: held back, and the
            // channel (its only subscriber held back) left on the server.
            connection.push([message(6)])
            let leaving = try #require(await sent.next(), "the unsubscribe of a channel whose only subscriber is held back")
            #expect(try codec.decodeClientMessage(leaving) == .unsubscribe(id: 3, channel: "room"))
            let messages = PatientReader(rest: room.makeAsyncIterator())
            #expect(await messages.nextSequence() == 1, "the large read, taken whole by a subscriber that held nothing")
            // Read down (the batch taken): subscribed again after the last message it got.
            let again = try #require(await sent.next(), "the catch-up's subscribe")
            #expect(try codec.decodeClientMessage(again) == .subscribe(id: 4, channel: "room", since: 5))
            connection.push([.frame(try codec.encode(.ack(Ack(id: 4, sequence: 6)))), message(6)])
            for sequence in 2...6 { #expect(await messages.nextSequence() == UInt64(sequence), "every message, once, in order") }
        }
    }
}

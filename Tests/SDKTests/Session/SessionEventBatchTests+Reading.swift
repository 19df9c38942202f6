@testable import SDK
import SDKTesting
import Testing

/// Without a store, an iterator takes each batch once and reads it as its own
/// (`Subscription.Reading`): no lock per message. Its progress still reaches the stall check
/// message by message, and what it lets go of halfway goes to the next iterator.
extension SessionEventBatchTests {
    @Test("a subscriber held back while it reads a batch it already took, a message per stall interval, is not ended: each message it takes is progress")
    func slowReaderInsideATakenBatch() async throws {
        let clock = TestClock()
        try await withConnectedSession(clock: clock, configure: { $0.subscriberBufferLimit(4).subscriberStallTimeout(.seconds(10)) }) {
            session, connection, sent, _ in
            let lobby = try await subscribe(session, to: "lobby", id: 2, latest: 0, on: connection, &sent)
            connection.push((1...3).map { message(UInt64($0), .number(.init(Double($0))), on: "lobby") })
            var reader = lobby.makeAsyncIterator()
            // The reader takes the first read's batch of three, and reads one of them.
            #expect(try await reader.next()?.sequence == 1)
            // Four more wait unread; the fifth holds it back.
            for sequence in 4...8 { connection.push([message(UInt64(sequence), .number(.init(Double(sequence))), on: "lobby")]) }
            await clock.settle()
            #expect(session.armedTimers.contains(.subscriberStall), "held back")
            for sequence in 2...3 {
                #expect(try await reader.next()?.sequence == UInt64(sequence), "from the batch it holds")
                await clock.advance(by: .seconds(10))
                #expect(session.armedTimers.contains(.subscriberStall), "a stall check saw progress and looks again")
                #expect(session.subscribedChannels["lobby"] != nil, "not ended after message \(sequence)")
            }
            #expect(try await reader.next()?.sequence == 4, "and reads on")
        }
    }
}

@testable import SDK
import SDKTesting
import Testing

/// What one socket read costs in wake-ups, counted: the transport hands the read to the
/// session's funnel itself (no reader task in between), the run loop takes it (1), and each
/// subscriber's task takes it as one batch (2). A finished batch goes back to the session only
/// where something needs it: a store (`SessionStoreTests` pin that what the app finished is
/// stored), or a protocol that acknowledges on "finished".
extension SessionEventBatchTests {
    /// Reads `reads` reads of three messages each on `room`, each read whole; returns the funnel's
    /// inputs and the subscriber's batches they cost, and the bytes the transport was told the
    /// session took.
    func costOfReads(_ reads: Int) async throws -> (inputs: Int, readsHandled: Int, batches: UInt64, untaken: Int) {
        let clock = TestClock()
        var result: (inputs: Int, readsHandled: Int, batches: UInt64, untaken: Int) = (0, 0, 0, 0)
        try await withConnectedSession(clock: clock) { session, connection, sent, _ in
            let room = try await subscribe(session, to: "room", id: 2, latest: 0, on: connection, &sent)
            #expect(connection.reads.isDirect, "the session takes the reads on the transport's thread, not through a reader task")
            await clock.settle()
            let before = await session.funnelCounts
            let batchesBefore = room.backlog.withLock { $0.batches }
            let takenBefore = connection.takenBytes.withLock { $0 }
            var messages = room.makeAsyncIterator()
            var handedBytes = 0
            for read in 0..<reads {
                let batch = (1...3).map { message(UInt64(read * 3 + $0), .number(.init(Double(read)))) }
                handedBytes += batch.frameBytes
                connection.push(batch)
                for _ in 0..<3 { _ = try #require(try await messages.next()) }
            }
            // The last message counts as finished when the app asks for the next one: one more
            // read makes the iterator finish the batch before it waits.
            let last = [message(UInt64(reads * 3 + 1), "last")]
            handedBytes += last.frameBytes
            connection.push(last)
            _ = try #require(try await messages.next())
            await clock.settle()
            let after = await session.funnelCounts
            let batchesAfter = room.backlog.withLock { $0.batches }
            let takenAfter = connection.takenBytes.withLock { $0 }
            result = (after.inputs - before.inputs, after.reads - before.reads, batchesAfter - batchesBefore, handedBytes - (takenAfter - takenBefore))
        }
        return result
    }

    @Test("without a store, a read costs two wake-ups: the run loop's and the subscriber's; nothing comes back when a batch is finished")
    func twoWakeUpsPerRead() async throws {
        let cost = try await costOfReads(20)
        #expect(cost.readsHandled == 21)
        #expect(cost.inputs == 21, "one funnel input per read, no `batchFinished`: \(cost.inputs) for 21 reads")
        #expect(cost.batches == 21, "one batch per read for the subscriber")
        #expect(cost.untaken == 0, "every read handled was taken: the transport may read on")
    }
}

@testable import SDK
import SDKTesting
import Testing

/// A read's messages count toward a subscriber's byte bound by their frames' size, taken from the
/// read (no message's JSON is walked to size it).
extension SessionEventBatchTests {
    @Test("a subscriber holding a read's frames is held back when the next read's frames would pass its byte bound, however small their data")
    func byteBoundCountsTheFrames() async throws {
        let clock = TestClock()
        try await withConnectedSession(clock: clock, configure: { $0.subscriberBufferBytes(1024) }) { session, connection, sent, _ in
            let room = try await subscribe(session, to: "room", id: 2, latest: 0, on: connection, &sent)
            let first = (1...12).map { message(UInt64($0), "x") }
            let second = (13...24).map { message(UInt64($0), "x") }
            #expect(first.frameBytes > 512 && first.frameBytes < 1024, "\(first.frameBytes) bytes of frames; the data alone is 36")
            connection.push(first)
            await clock.settle()
            #expect(room.backlog.withLock { $0.unread } == 12, "a subscriber holding nothing takes a read whole")
            connection.push(second)
            await clock.settle()
            let (unread, bytes, heldBack) = room.backlog.withLock { ($0.unread, $0.unreadBytes, $0.resumeAt != nil) }
            #expect(unread == 12 && heldBack, "the second read would hold \(first.frameBytes + second.frameBytes) bytes of frames: held back")
            #expect(bytes == first.frameBytes, "counted as its frames' size")
        }
    }
}

import Foundation
import SDK
import SDKTesting

/// `bench slow-subscriber --reading-half-rate`: one channel receiving `rate` messages a second
/// (about 220 bytes each) for `seconds`, while its only subscriber reads at half that rate; then
/// the publisher stops and the subscriber reads the rest at full speed. The subscriber is held
/// back at its bound and caught up from the server each time it has read half
/// (Sources/SDK/SDK.docc/FlowControl.md). Checks that it got every message, in order, once, and measures the
/// process's resident memory growth and how many times it was held back. The server (in the
/// bench's process) keeps every message (`retention`), so its memory is in the figure too.
struct SlowReaderBench {
    let seconds: Int
    let rate: Int
    let limit: Int

    func run() async throws {
        let total = seconds * rate
        let server = TestServer(retention: total)
        let holds = Locked(0)
        // BENCH_LOG=1: the session's log on standard error, to see the holds and catch-ups.
        let verbose = ProcessInfo.processInfo.environment["BENCH_LOG"] == "1"
        let logger = SessionLogger(minimumLevel: verbose ? .debug : .notice) { record in
            if record.message.contains("held back until") { holds.withLock { $0 += 1 } }
            if verbose { FileHandle.standardError.write(Data("\(ContinuousClock.now) \(record)\n".utf8)) }
        }
        let settings = try AppSettings.Builder().serverURL("ws://127.0.0.1:9/").token("bench").noHeartbeat().subscriberBufferLimit(limit).logger(logger).build()
        let session = Session(settings: settings, transport: server.transport())
        let runner = Task { await session.run() }
        defer { runner.cancel() }
        var updates = session.statusUpdates.makeAsyncIterator()
        while let status = await updates.next(), status != .connected {}
        let room = try await session.subscribe(to: "room")
        let text = String(repeating: "x", count: 160)
        let baseline = residentBytes()
        let peak = Locked(baseline)
        let start = ContinuousClock.now
        // The reader: half the rate while the publisher runs, then as fast as it can.
        let reader = Task { () throws -> (received: Int, inOrder: Bool) in
            var received = 0
            var inOrder = true
            var messages = room.makeAsyncIterator()
            while received < total {
                guard let message = try await messages.next() else { break }
                received += 1
                if verbose, received % 5000 == 0 { FileHandle.standardError.write(Data("\(ContinuousClock.now) reader: \(received) (n = \(message.data["n"] ?? .null))\n".utf8)) }
                if message.data["n"] != JSONValue(received) { inOrder = false }
                // Paced: `rate / 2` a second until the publisher is done.
                let due = start + .microseconds(Int64(received) * 2_000_000 / Int64(rate))
                if received % 50 == 0, due > .now, ContinuousClock.now - start < .seconds(seconds) { try await Task.sleep(until: due) }
            }
            return (received, inOrder)
        }
        let perTick = max(1, rate / 100)
        var published = 0
        for tick in 0..<(seconds * 100) {
            for _ in 0..<perTick where published < total {
                published += 1
                _ = try server.publish(["n": JSONValue(published), "from": "bench-user-0042", "text": .string(text)], to: "room")
            }
            if tick % 100 == 99 {
                peak.withLock { $0 = max($0, residentBytes()) }
                print("  \((tick + 1) / 100) s: \(published) published, +\((residentBytes() - baseline) / 1024) KiB resident, held back \(holds.withLock { $0 }) times")
            }
            let next = start + .milliseconds(10 * (tick + 1))
            if next > .now { try await Task.sleep(until: next) }
        }
        let (received, inOrder) = try await reader.value
        let elapsed = ContinuousClock.now - start
        let end = residentBytes()
        let growth = (max(peak.withLock { $0 }, end) - baseline) / 1_048_576
        print("  published \(published); the reader got \(received), \(inOrder ? "every one in order, once" : "NOT in order or not once"), in \(elapsed)")
        print("  resident memory: peak +\(growth) MiB (the server's retention of \(total) messages included), at the end +\((end - baseline) / 1_048_576) MiB")
        print("slow-subscriber: reading=half-rate limit=\(limit) published=\(published) received=\(received) in_order=\(inOrder) held_back=\(holds.withLock { $0 }) peak_growth_mib=\(growth)")
        await session.shutdown()
        guard received == published, inOrder else { throw BenchError("the slow reader did not get every message in order, once") }
    }
}

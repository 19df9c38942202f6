import Foundation
import SDK
import SDKTesting

/// `bench slow-subscriber`: one channel receiving `rate` messages a second (about 220 bytes
/// each) for `seconds`, while its only subscriber reads nothing; then the subscriber reads what
/// it was given. Measures the process's resident memory growth (peak and at the end) and what
/// the reader gets: the session holds at most `subscriberBufferLimit` messages for it, then holds
/// it back (and leaves the channel on the server); reading nothing for `subscriberStallTimeout`
/// it ends with `subscriberTooSlow`, and a catch-up past the server's retention with
/// `subscriberFellBehind`. `--limit N` sets the limit (1,000,000, the largest, for the
/// side-by-side figure of a buffer that is allowed to grow). `--reading-half-rate` is the reader
/// that reads (``SlowReaderBench``).
struct SlowSubscriberBench {
    let seconds: Int
    let rate: Int
    let limit: Int?

    func run() async throws {
        let server = TestServer()
        var builder = AppSettings.Builder().serverURL("ws://127.0.0.1:9/").token("bench").noHeartbeat()
        if let limit { builder = builder.subscriberBufferLimit(limit) }
        let settings = try builder.build()
        let session = Session(settings: settings, transport: server.transport())
        let runner = Task { await session.run() }
        defer { runner.cancel() }
        var updates = session.statusUpdates.makeAsyncIterator()
        while let status = await updates.next(), status != .connected {}
        let room = try await session.subscribe(to: "room")
        let text = String(repeating: "x", count: 160)
        let baseline = residentBytes()
        var peak = baseline
        let start = ContinuousClock.now
        let perTick = max(1, rate / 100)
        var published = 0
        for tick in 0..<(seconds * 100) {
            for _ in 0..<perTick {
                published += 1
                _ = try server.publish(["n": JSONValue(published), "from": "bench-user-0042", "text": .string(text)], to: "room")
            }
            if tick % 100 == 99 {
                peak = max(peak, residentBytes())
                print("  \((tick + 1) / 100) s: \(published) published, +\((residentBytes() - baseline) / 1024) KiB resident")
            }
            // Paced on the wall clock: `rate` a second on average.
            let next = start + .milliseconds(10 * (tick + 1))
            if next > .now { try await Task.sleep(until: next) }
        }
        // Until the session has taken every message from the server (a bench may poll).
        while let held = session.subscribedChannels["room"], held != UInt64(published) {
            try await Task.sleep(for: .milliseconds(10))
        }
        peak = max(peak, residentBytes())
        var received = 0
        var ending = "the subscription went on"
        var last: JSONValue?
        do {
            for try await message in room {
                received += 1
                last = message.data["n"]
                if received == published { break }
            }
        } catch let error as SessionError {
            ending = "\(error.code): \(error.message)"
        }
        let end = residentBytes()
        print("  published \(published); the reader then got \(received) (last n = \(last.map { "\($0)" } ?? "none")), then: \(ending)")
        print("  resident memory: baseline \(baseline / 1_048_576) MiB, peak +\((peak - baseline) / 1_048_576) MiB, at the end +\((end - baseline) / 1_048_576) MiB")
        print("slow-subscriber: limit=\(settings.subscriberBufferLimit) published=\(published) received=\(received) peak_growth_mib=\((peak - baseline) / 1_048_576)")
        await session.shutdown()
    }
}

import Foundation
import SDK
import SDKTesting

/// `bench store`: what the store costs, in one run, against the same work in memory.
/// - publishes into an offline outbox: `publishes` calls made at once (one task each), from the
///   first call until the session has shut down (with a store: every record written and synced),
///   with a `FileSessionStore` in a fresh directory against no store; the median of `runs`.
/// - relaunch to caught up for `subscriptions` channels, each missing one message: a relaunch on
///   the store (a new session subscribes to every channel again and resumes from the stored
///   positions) against a warm reconnect of a session that held them; until the recovery report.
struct StoreBench {
    let publishes: Int
    let subscriptions: Int
    let runs: Int

    func run() async throws {
        var memory: [Duration] = []
        var file: [Duration] = []
        for _ in 0..<runs {
            memory.append(try await offlinePublishes(store: nil))
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-bench-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            file.append(try await offlinePublishes(store: FileSessionStore(directory: directory)))
        }
        let (memoryMedian, fileMedian) = (median(memory), median(file))
        let perPublish = { (total: Duration) in Self.micros(total) / Double(publishes) }
        print("offline outbox, \(publishes) publishes, median of \(runs):")
        print("  in memory:  \(Self.format(memoryMedian)) (\(String(format: "%.2f", perPublish(memoryMedian))) µs each)")
        print("  file store: \(Self.format(fileMedian)) (\(String(format: "%.2f", perPublish(fileMedian))) µs each)")
        let ratio = Self.micros(fileMedian) / Self.micros(memoryMedian)
        print("  ratio: \(String(format: "%.2f", ratio))× (goal ≤ 1.5×)")

        var warm: [Duration] = []
        var relaunch: [Duration] = []
        for _ in 0..<runs {
            warm.append(try await warmReconnect())
            relaunch.append(try await relaunchCaughtUp())
        }
        print("\(subscriptions) subscriptions, one missed message each, median of \(runs):")
        print("  warm reconnect:        \(Self.format(median(warm)))")
        print("  relaunch on the store: \(Self.format(median(relaunch)))")
        print(String(
            format: "bench store: outbox %.2f× in memory (%.2f vs %.2f µs a publish); relaunch to caught up %@ vs warm reconnect %@",
            ratio, perPublish(fileMedian), perPublish(memoryMedian), Self.format(median(relaunch)), Self.format(median(warm))
        ))
    }

    /// Makes `publishes` calls on a session with no connection, and shuts it down.
    private func offlinePublishes(store: (any SessionStore)?) async throws -> Duration {
        var builder = AppSettings.Builder().serverURL("ws://127.0.0.1:9/").token("bench").noHeartbeat()
            .autoEstablishSocketConnection(false).outboxLimit(publishes).outboxTimeout(.seconds(3600))
        if let store { builder = builder.store(store) }
        let session = Session(settings: try builder.build(), transport: TestServer().transport())
        let runner = Task { await session.run() }
        let start = ContinuousClock.now
        let calls = (0..<publishes).map { n in Task { _ = try? await session.publish(["n": JSONValue(n), "text": "a message typed on the subway"], to: "room") } }
        var counts = session.outboxCountUpdates.makeAsyncIterator()
        while let count = await counts.next(), count < publishes {}
        await session.shutdown()
        let elapsed = ContinuousClock.now - start
        for call in calls { await call.value }
        await runner.value
        return elapsed
    }

    /// The channels `room-0` … held by an Auto session that goes to the background, misses one
    /// message each, and comes back.
    private func warmReconnect() async throws -> Duration {
        let server = TestServer()
        let lifecycle = LifecycleDriver()
        let session = Session(settings: try settings(store: nil), transport: server.transport(), lifecycle: lifecycle)
        let runner = Task { await session.run() }
        defer { runner.cancel() }
        try await session.connect()
        var held: [Subscription] = []
        for n in 0..<subscriptions { held.append(try await session.subscribe(to: "room-\(n)")) }
        var reports = session.recoveryReports.makeAsyncIterator()
        await lifecycle.background()
        var statuses = session.statusUpdates.makeAsyncIterator()
        while let status = await statuses.next(), status == .connected {}
        for n in 0..<subscriptions { _ = try server.publish(1, to: "room-\(n)") }
        let start = ContinuousClock.now
        await lifecycle.foreground()
        _ = await reports.next()
        let elapsed = ContinuousClock.now - start
        _ = held
        await session.shutdown()
        return elapsed
    }

    /// The same channels, held by a launch that was killed: a new session on its store.
    private func relaunchCaughtUp() async throws -> Duration {
        let server = TestServer()
        let store = InMemorySessionStore()
        let first = Session(settings: try settings(store: store), transport: server.transport())
        let runner = Task { await first.run() }
        try await first.connect()
        var held: [Subscription] = []
        for n in 0..<subscriptions { held.append(try await first.subscribe(to: "room-\(n)")) }
        store.kill()
        runner.cancel()
        await runner.value
        held = []
        for n in 0..<subscriptions { _ = try server.publish(1, to: "room-\(n)") }
        let start = ContinuousClock.now
        // Launched in the background (a push, a refresh), then brought to the foreground: the
        // app subscribes again, then the session connects and catches up.
        let lifecycle = LifecycleDriver(initialState: .background)
        let second = Session(settings: try settings(store: store.relaunched()), transport: server.transport(), lifecycle: lifecycle)
        let secondRunner = Task { await second.run() }
        defer { secondRunner.cancel() }
        var reports = second.recoveryReports.makeAsyncIterator()
        for n in 0..<subscriptions { held.append(try await second.subscribe(to: "room-\(n)")) }
        await lifecycle.foreground()
        _ = await reports.next()
        let elapsed = ContinuousClock.now - start
        _ = held
        await second.shutdown()
        return elapsed
    }

    private func settings(store: (any SessionStore)?) throws -> AppSettings {
        var builder = AppSettings.Builder().serverURL("ws://127.0.0.1:9/").token("bench").noHeartbeat().autoEstablishSocketConnection(true)
        if let store { builder = builder.store(store) }
        return try builder.build()
    }

    private func median(_ values: [Duration]) -> Duration { values.sorted()[values.count / 2] }

    static func micros(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) * 1e6 + Double(parts.attoseconds) / 1e12
    }

    static func format(_ duration: Duration) -> String { String(format: "%.1f ms", micros(duration) / 1000) }
}

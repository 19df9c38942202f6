import Foundation
import NIOTransport
import ReferenceServer
import SDK
import SDKTesting

/// `bench soak`: connect → background → foreground, many times, against the reference server:
/// resident memory growth, and sockets and sessions left alive afterwards.
struct SoakBench {
    let cycles: Int

    func run() async throws {
        let server = RealtimeServer(RealtimeServer.Configuration(tokens: ["bench"]))
        try await server.withRunning { port in
            let transport = CountingTransport(NIOWebSocketTransport())
            let settings = try AppSettings.Builder().serverURL("ws://127.0.0.1:\(port)/").token("bench").noHeartbeat().build()
            weak var weakSession: Session?
            var growth = 0
            do {
                let lifecycle = ManualLifecycleSource()
                let session = Session(settings: settings, transport: transport, lifecycle: lifecycle)
                weakSession = session
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { await session.run() }
                    var updates = session.statusUpdates.makeAsyncIterator()
                    let room = try await session.subscribe(to: "room")
                    var baseline = 0
                    let warmup = min(500, cycles / 10)
                    for cycle in 0..<cycles {
                        if cycle == warmup { baseline = residentBytes() }
                        while let status = await updates.next(), status != .connected {}
                        await lifecycle.send(.background)
                        await lifecycle.send(.active)
                    }
                    while let status = await updates.next(), status != .connected {}
                    growth = residentBytes() - baseline
                    withExtendedLifetime(room) {}
                    await session.shutdown()
                    group.cancelAll()
                }
            }
            await server.waitForOpenConnections(0)
            _ = await transport.waitForOpen(0, timeout: .seconds(5))
            let alive = weakSession == nil ? 0 : 1
            print("  \(cycles) cycles; resident memory growth after warm-up: \(growth / 1024) KiB; sockets open: \(transport.openCount) (server: \(server.openConnectionCount)); sessions alive: \(alive); opened: \(transport.openedCount)")
            print("soak: cycles=\(cycles) rss_growth_kib=\(growth / 1024) sockets_open=\(transport.openCount + server.openConnectionCount) sessions_alive=\(alive)")
        }
    }

    /// Resident memory of this process, from /proc (Linux) — 0 where that is not available.
    private func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

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
        // The reference server runs in a process of its own (the `realtime-server` beside this
        // executable), so this process's memory is the client's alone. SOAK_PORT=N uses a server
        // already running; without the executable, the server runs in this process.
        if let external = ProcessInfo.processInfo.environment["SOAK_PORT"].flatMap(Int.init) {
            try await soak(port: external, server: nil)
            return
        }
        let serverPath = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("realtime-server").path
        if FileManager.default.isExecutableFile(atPath: serverPath) {
            let port = 20000 + Int(getpid() % 20000)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: serverPath)
            process.arguments = ["--port", String(port), "--token", "bench"]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            defer { process.terminate() }
            try await Task.sleep(for: .milliseconds(500))
            print("  server: \(serverPath) in its own process, port \(port)")
            try await soak(port: port, server: nil)
            return
        }
        print("  server: in this process (build realtime-server to measure the client alone)")
        let server = RealtimeServer(RealtimeServer.Configuration(tokens: ["bench"]))
        try await server.withRunning { port in try await soak(port: port, server: server) }
    }

    private func soak(port: Int, server: RealtimeServer?) async throws {
        do {
            // SOAK_IN_MEMORY=1: the in-memory transport (no NIO at all), to tell the session's
            // memory from the transport's.
            let transport = CountingTransport(
                ProcessInfo.processInfo.environment["SOAK_IN_MEMORY"] != nil ? TestServer().transport() : NIOWebSocketTransport()
            )
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
                    let room: Subscription? = ProcessInfo.processInfo.environment["SOAK_NO_SUBSCRIPTION"] == nil ? try await session.subscribe(to: "room") : nil
                    // Warm up past the longest timer (connect and request timeouts, 10 s): the Swift
                    // runtime keeps a cancelled `Task.sleep`'s wake-up (~300 B) until its deadline,
                    // so the first 10 s of fast cycling fill a bounded pool. Measure from there.
                    let warmupEnd = ContinuousClock.now + .seconds(15)
                    var warmupCycles = 0
                    while ContinuousClock.now < warmupEnd {
                        while let status = await updates.next(), status != .connected {}
                        await lifecycle.send(.background)
                        await lifecycle.send(.active)
                        warmupCycles += 1
                    }
                    let baseline = residentBytes()
                    print("  warm-up: \(warmupCycles) cycles in 15 s")
                    for cycle in 0..<cycles {
                        if cycle > 0, cycle % (cycles / 5) == 0 {
                            print("  after \(cycle) cycles: +\((residentBytes() - baseline) / 1024) KiB resident")
                        }
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
            await server?.waitForOpenConnections(0)
            _ = await transport.waitForOpen(0, timeout: .seconds(5))
            let alive = weakSession == nil ? 0 : 1
            print("  \(cycles) cycles; resident memory growth after warm-up: \(growth / 1024) KiB; sockets open: \(transport.openCount) (server: \(server?.openConnectionCount ?? 0)); sessions alive: \(alive); opened: \(transport.openedCount)")
            print("soak: cycles=\(cycles) rss_growth_kib=\(growth / 1024) sockets_open=\(transport.openCount + (server?.openConnectionCount ?? 0)) sessions_alive=\(alive)")
        }
    }
}

    /// Resident memory of this process, from /proc (Linux) — 0 where that is not available.
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}


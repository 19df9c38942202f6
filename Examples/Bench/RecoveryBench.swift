import NIOTransport
import ReferenceServer
import SDK

/// `bench recovery`: the time from the app's return to the foreground to fully recovered
/// (every subscription replayed and caught up), with every server frame delayed by an emulated
/// round trip, pipelined against sequential (seed 002's one-step-at-a-time), in the same run.
struct RecoveryBench {
    let subscriptions: Int
    let rtt: Duration
    let runs: Int

    func run() async throws {
        var configuration = RealtimeServer.Configuration(tokens: ["bench"])
        configuration.faults.frameDelay = rtt
        let server = RealtimeServer(configuration)
        try await server.withRunning { port in
            let pipelined = try await measure(.pipelined, port: port, server: server)
            let sequential = try await measure(.sequential, port: port, server: server)
            let speedup = sequential.milliseconds / max(pipelined.milliseconds, 0.001)
            print("recovery: subscriptions=\(subscriptions) rtt_ms=\(rtt.milliseconds.formatted(0)) pipelined_ms=\(pipelined.milliseconds.formatted(1)) "
                + "sequential_ms=\(sequential.milliseconds.formatted(1)) speedup=\(speedup.formatted(1))")
        }
    }

    /// The median of `runs` recoveries, as the recovery report measured them.
    private func measure(_ mode: ReplayMode, port: Int, server: RealtimeServer) async throws -> Duration {
        let settings = try AppSettings.Builder()
            .serverURL("ws://127.0.0.1:\(port)/")
            .token("bench")
            .replayMode(mode)
            .requestTimeout(.seconds(120))
            .connectTimeout(.seconds(30))
            .build()
        let lifecycle = ManualLifecycleSource()
        let session = Session(settings: settings, transport: NIOWebSocketTransport(), lifecycle: lifecycle)
        var samples: [Duration] = []
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await session.run() }
            var reports = session.recoveryReports.makeAsyncIterator()
            var held: [Subscription] = []
            for index in 0..<subscriptions { held.append(try await session.subscribe(to: "channel-\(index)")) }
            _ = await reports.next()  // the launch's recovery
            for run in 0..<runs {
                await lifecycle.send(.background)
                await server.waitForOpenConnections(0)
                // Something to catch up on every channel, published while the app is away.
                for index in 0..<subscriptions { try server.publish(JSONValue(run), to: "channel-\(index)") }
                await lifecycle.send(.active)
                guard let report = await reports.next() else { throw SessionError(.sessionEnded, "no recovery report") }
                guard report.isComplete, report.caughtUp.values.reduce(0, +) == subscriptions else {
                    throw SessionError(.rejected, "incomplete recovery: \(report)")
                }
                samples.append(report.duration)
            }
            withExtendedLifetime(held) {}
            await session.shutdown()
            group.cancelAll()
        }
        let sorted = samples.sorted()
        let median = sorted[sorted.count / 2]
        print("  \(mode) x\(runs): median \(median.milliseconds.formatted(1)) ms (min \(sorted[0].milliseconds.formatted(1)), max \(sorted[sorted.count - 1].milliseconds.formatted(1)))")
        return median
    }
}

extension Duration {
    var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }
}

extension Double {
    func formatted(_ decimals: Int) -> String {
        let scale = [1.0, 10, 100, 1000][min(max(decimals, 0), 3)]
        let rounded = (self * scale).rounded() / scale
        return decimals == 0 ? String(Int(rounded)) : String(rounded)
    }
}

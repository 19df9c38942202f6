import Foundation
import NIOTransport
import ReferenceServer
import SDK

/// `bench recovery`: the time from the app's return to the foreground to fully recovered
/// (every subscription replayed and caught up, the outbox flushed), with the server's every byte
/// delayed by an emulated round trip (``DelayProxy``), for each way of recovering on Tether's
/// protocol in the same run: seed 002's one step at a time, the replay pipelined after `auth`'s
/// `ok`, pipelined behind `auth` (version 1), and resumed in the upgrade request (version 2).
struct RecoveryBench {
    /// One way of recovering, and the fewest round trips it can take after the upgrade's TCP.
    struct Mode: Sendable {
        let name: String
        let replay: ReplayMode
        let handshake: TetherHandshake
        let minimumRounds: Int

        static let all = [
            Mode(name: "sequential", replay: .sequential, handshake: .afterAuthentication, minimumRounds: 0),
            Mode(name: "pipelined-after-auth", replay: .pipelined, handshake: .afterAuthentication, minimumRounds: 3),
            Mode(name: "pipelined-with-auth", replay: .pipelined, handshake: .pipelined, minimumRounds: 2),
            Mode(name: "resume-in-upgrade", replay: .pipelined, handshake: .resumeInUpgrade, minimumRounds: 1),
        ]
    }

    let subscriptions: Int
    let rtt: Duration
    let runs: Int
    let modes: [Mode]
    /// `--nothing-missed`: nothing is published while the app is away (each resumed channel is
    /// answered, and nothing else comes).
    var nothingMissed = false

    func run() async throws {
        try await BenchServerSet.withServer(rtt: rtt, retention: 1000) { server, port in
            var results: [String: RecoverySamples] = [:]
            for mode in modes {
                results[mode.name] = try await measure(mode, port: port, server: server)
            }
            let figures = modes.map { mode -> String in
                let median = results[mode.name]?.median ?? .zero
                return "\(mode.name)_ms=\(median.milliseconds.formatted(1)) \(mode.name)_rtt=\((median.milliseconds / rtt.milliseconds).formatted(2))"
            }
            print("recovery: subscriptions=\(subscriptions) rtt_ms=\(rtt.milliseconds.formatted(0)) " + figures.joined(separator: " "))
            // The default way, in the figures issue 53 judges it by: RTTs and the client's CPU.
            if let samples = results["resume-in-upgrade"], let cpu = samples.cpuMedian {
                let ms = rtt.milliseconds
                print(
                    "recovery: mode=resume-in-upgrade subscriptions=\(subscriptions) rtt_ms=\(ms.formatted(0)) rtt_median=\((samples.median.milliseconds / ms).formatted(2)) "
                        + "rtt_min=\((samples.sorted[0].milliseconds / ms).formatted(2)) rtt_max=\((samples.sorted[samples.sorted.count - 1].milliseconds / ms).formatted(2)) "
                        + "client_cpu_ms=\(cpu.milliseconds.formatted(2)) client_cpu_us_per_sub=\((cpu.milliseconds * 1000 / Double(subscriptions)).formatted(2)) "
                        + "server_cpu_ms=\(samples.serverCPUMedian.map { $0.milliseconds.formatted(2) } ?? "n/a") frames_in=\(samples.framesInMedian.map(String.init) ?? "n/a") "
                        + "missed=\(nothingMissed ? 0 : subscriptions) runs=\(runs)"
                )
            }
        }
    }

    /// The median of `runs` recoveries, as the recovery report measured them.
    private func measure(_ mode: Mode, port: Int, server: any BenchServer) async throws -> RecoverySamples {
        let settings = try AppSettings.Builder()
            .serverURL("ws://127.0.0.1:\(port)/")
            .token("bench")
            .serverProtocol(.tether(handshake: mode.handshake))
            .replayMode(mode.replay)
            .requestTimeout(.seconds(120))
            .connectTimeout(.seconds(30))
            .logger(Self.logger)
            .build()
        let recoveries = try await RecoveryRuns(settings: settings, transport: NIOWebSocketTransport(), runs: runs, away: rtt * 10).measure(
            subscribe: { session in
                var held: [Subscription] = []
                for index in 0..<subscriptions { held.append(try await session.subscribe(to: "channel-\(index)")) }
                return held
            },
            // Away for ten round trips, as an app is away for seconds: the old socket's close
            // handshake (its answers delayed like every other byte) is over before the return.
            whenGone: { _ in try await server.waitForNoConnections() },
            // Something to catch up on every channel, published while the app is away.
            beforeReturn: { run in
                if !nothingMissed { try await server.publish(toEach: "channel-", count: subscriptions, text: "\(run)") }
            },
            server: server,
            check: { report in
                guard report.isComplete, report.caughtUp.values.reduce(0, +) == (nothingMissed ? 0 : subscriptions) else {
                    throw SessionError(.rejected, "incomplete recovery: \(report)")
                }
            }
        )
        let minimum = mode.minimumRounds > 0 ? " (fewest possible: \(mode.minimumRounds) RTT)" : ""
        print("  \(mode.name) x\(runs): " + recoveries.summary(rtt: rtt, note: minimum))
        return recoveries
    }
}

extension RecoveryBench {
    /// BENCH_LOG=1: the session's log on standard error (what each upgrade carried).
    static let logger: SessionLogger = {
        let verbose = ProcessInfo.processInfo.environment["BENCH_LOG"] == "1"
        return SessionLogger(minimumLevel: verbose ? .debug : .notice) { record in
            if verbose { FileHandle.standardError.write(Data("\(ContinuousClock.now) \(record)\n".utf8)) }
        }
    }()
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

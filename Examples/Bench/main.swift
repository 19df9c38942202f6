import Foundation

// swift run -c release bench <scenario> [options]
//   recovery [--subscriptions N] [--rtt-ms MS] [--runs R] [--sweep]
// Each scenario prints its figures and ends with one summary line.

let usage = """
    usage: bench recovery   [--subscriptions N] [--rtt-ms MS] [--runs R] [--sweep] [--fast] [--mode NAME] [--adapters]
           bench throughput [--messages N] [--rounds R] [--busy] [--only session|raw|handoff|perstream] [--paced K]
           bench proxy      --upstream-port P [--delay-ms MS] [--port-file F]
           bench reaction   [--cycles N]
           bench background [--minutes M]
           bench power      [--minutes M]
           bench soak       [--cycles N]
           bench slow-subscriber [--seconds S] [--rate R] [--limit N] [--reading-half-rate]
           bench store      [--publishes N] [--subscriptions N] [--runs R]
    """

let arguments = Array(CommandLine.arguments.dropFirst(2))
guard let scenario = CommandLine.arguments.dropFirst().first else {
    print(usage)
    exit(2)
}

func option(_ name: String, default value: Int) -> Int {
    let arguments = Array(CommandLine.arguments.dropFirst(2))
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let number = Int(arguments[index + 1]) else { return value }
    return number
}

do {
    switch scenario {
    case "recovery":
        let rtt = option("--rtt-ms", default: 20)
        let runs = option("--runs", default: 5)
        let counts = arguments.contains("--sweep") ? [10, 100, 1000, 5000] : [option("--subscriptions", default: 100)]
        // --fast leaves out the sequential replay (minutes at N = 1000).
        var modes = arguments.contains("--fast") ? Array(RecoveryBench.Mode.all.dropFirst()) : RecoveryBench.Mode.all
        if let index = arguments.firstIndex(of: "--mode"), index + 1 < arguments.count {
            modes = modes.filter { $0.name == arguments[index + 1] }
        }
        for count in counts {
            if arguments.contains("--adapters") {
                try await AdapterRecoveryBench(subscriptions: count, rtt: .milliseconds(rtt), runs: runs).run()
            } else {
                try await RecoveryBench(subscriptions: count, rtt: .milliseconds(rtt), runs: runs, modes: modes, nothingMissed: arguments.contains("--nothing-missed")).run()
            }
        }
    case "proxy":
        // The delay proxy as a process of its own (the benchmarks start it): serves until killed.
        let upstream = option("--upstream-port", default: 0)
        let delay = Duration.milliseconds(option("--delay-ms", default: 20))
        let portFile = arguments.firstIndex(of: "--port-file").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
        try await DelayProxy.withRunning(delay: delay, upstreamPort: upstream) { port in
            if let portFile { try String(port).write(toFile: portFile, atomically: true, encoding: .utf8) }
            while true { try await Task.sleep(for: .seconds(3600)) }
        }
    case "throughput":
        let only = arguments.firstIndex(of: "--only").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
        guard only == nil || ["session", "raw", "handoff", "perstream"].contains(only ?? "") else { throw BenchError("--only takes session, raw, handoff or perstream") }
        try await ThroughputBench(
            messages: option("--messages", default: arguments.contains("--paced") ? 5_000 : 50_000), rounds: option("--rounds", default: 5),
            busy: arguments.contains("--busy"), only: only, paced: arguments.contains("--paced") ? option("--paced", default: 3) : nil
        ).run()
    case "spin":
        // A CPU-bound neighbour for `throughput --busy`: spins until killed, or until its parent
        // goes (Linux).
        let parent = getppid()
        var x: UInt64 = 1
        while getppid() == parent {
            for _ in 0..<10_000_000 { x = x &* 6364136223846793005 &+ 1442695040888963407 }
            if x == 0 { print(x) }
        }
    case "reaction":
        try await ReactionBench(cycles: option("--cycles", default: 1_000), log: arguments.contains("--log")).run()
    case "background":
        try await BackgroundBench(minutes: option("--minutes", default: 10)).run()
    case "power":
        try await PowerBench(minutes: option("--minutes", default: 60)).run()
    case "handshake":
        try await HandshakeBench(cycles: option("--cycles", default: 3_000)).run()
    case "slow-subscriber" where arguments.contains("--reading-half-rate"):
        try await SlowReaderBench(seconds: option("--seconds", default: 10), rate: option("--rate", default: 5_000), limit: option("--limit", default: 10_000)).run()
    case "slow-subscriber":
        let limit = arguments.contains("--limit") ? option("--limit", default: 10_000) : nil
        try await SlowSubscriberBench(seconds: option("--seconds", default: 60), rate: option("--rate", default: 10_000), limit: limit).run()
    case "store":
        try await StoreBench(publishes: option("--publishes", default: 10_000), subscriptions: option("--subscriptions", default: 100), runs: option("--runs", default: 5)).run()
    case "soak":
        try await SoakBench(cycles: option("--cycles", default: 10_000)).run()
    default:
        print(usage)
        exit(2)
    }
} catch {
    print("bench: failed: \(error)")
    exit(1)
}

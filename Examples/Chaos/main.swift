import Foundation
import PeerServers
import ReferenceServer

// swift run -c release chaos [--schedules N] [--seed S] [--steps K] [--settle-ms MS] [--protocol graphql-ws|socket.io|mqtt|phoenix|supabase]
// Drives sessions through seeded random schedules of lifecycle flips, host calls and real
// faults, checking DESIGN.md's invariants after every step: on the reference server (the
// default), or with `--protocol` on a real third-party server (strawberry-graphql,
// python-socketio, mosquitto) with process-level faults (SIGKILL, SIGSTOP/SIGCONT, restart). A violation
// prints its seed and the shortest failing schedule found. Last line:
// `chaos: schedules=N violations=V seed=S`. With `CHAOS_LOG=1` in the environment, `--protocol`
// runs print the session's log (debug and up, timestamped) on standard error.

func option(_ name: String, default value: UInt64) -> UInt64 {
    let arguments = Array(CommandLine.arguments.dropFirst())
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let number = UInt64(arguments[index + 1]) else { return value }
    return number
}

func textOption(_ name: String) -> String? {
    let arguments = Array(CommandLine.arguments.dropFirst())
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

let schedules = Int(option("--schedules", default: 100))
let seed = option("--seed", default: 1)
let stepCount = Int(option("--steps", default: 20))
let protocolName = textOption("--protocol")
let settle = Duration.milliseconds(Int64(option("--settle-ms", default: protocolName == nil ? 30 : 100)))

/// Prints a line at once (stdout to a file is block-buffered: a hang would hide it).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Runs one schedule, or reports it as hung after `limit` (a hang is a violation too).
func runGuarded<Step: CustomStringConvertible & Sendable>(
    seed: UInt64, _ steps: [Step], limit: Duration = .seconds(120), _ run: @escaping @Sendable ([Step]) async throws -> [String]
) async throws -> [String] {
    try await withThrowingTaskGroup(of: [String]?.self) { group in
        group.addTask { try await run(steps) }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        guard let first = try await group.next(), let found = first else {
            say("chaos: HANG — schedule with seed \(seed) did not finish within \(limit): \(steps.map(\.description).joined(separator: "; "))")
            PeerServer.killAll()
            exit(3)
        }
        group.cancelAll()
        return found
    }
}

/// Runs `schedules` seeded schedules; shrinks each failing one. Returns the violations count.
func runSchedules<Step: CustomStringConvertible & Sendable>(
    makeSchedule: (UInt64) -> [Step],
    reset: @escaping @Sendable () async throws -> Void,
    run: @escaping @Sendable (_ seed: UInt64, _ auto: Bool, [Step]) async throws -> [String]
) async throws -> Int {
    var violations = 0
    for index in 0..<schedules {
        let scheduleSeed = seed &+ UInt64(index)
        let auto = scheduleSeed % 2 == 0
        let steps = makeSchedule(scheduleSeed)
        let found = try await runGuarded(seed: scheduleSeed, steps) { try await run(scheduleSeed, auto, $0) }
        if (index + 1) % 100 == 0 { say("chaos: \(index + 1) schedules, \(violations) violations so far") }
        try await reset()
        guard !found.isEmpty else { continue }
        violations += 1
        say("chaos: VIOLATION in schedule \(index) (seed \(scheduleSeed), \(auto ? "auto" : "manual") mode):")
        for text in found { say("  - \(text)") }
        say("  schedule: \(steps.map(\.description).joined(separator: "; "))")
        // Shrink: drop steps one at a time while the schedule still fails.
        var shortest = steps
        var position = 0
        while position < shortest.count {
            var candidate = shortest
            candidate.remove(at: position)
            try await reset()
            if try await !runGuarded(seed: scheduleSeed, candidate, { try await run(scheduleSeed, auto, $0) }).isEmpty {
                shortest = candidate
            } else {
                position += 1
            }
        }
        try await reset()
        say("  shortest failing schedule found (\(shortest.count) steps): \(shortest.map(\.description).joined(separator: "; "))")
    }
    return violations
}

if CommandLine.arguments.contains("--kill-client") {
    // One launch of the app in the kill mode (started by `chaos --kill`, never by hand).
    guard let port = textOption("--port").flatMap(Int.init), let store = textOption("--store"), let launch = textOption("--launch").flatMap(Int.init),
        let channels = textOption("--channels")?.split(separator: ",").map(String.init)
    else {
        say("chaos: --kill-client needs --port, --store, --launch and --channels")
        exit(2)
    }
    guard let target = KillTarget(rawValue: protocolName ?? "tether"), let clientID = textOption("--client-id") else {
        say("chaos: --kill-client needs --protocol (tether, mqtt or supabase) and --client-id")
        exit(2)
    }
    await KillClient(
        target: target, clientID: clientID, port: port, directory: URL(fileURLWithPath: store), seed: seed, launch: launch, channels: channels, isFinal: CommandLine.arguments.contains("--final")
    ).run()
    exit(0)
}

if CommandLine.arguments.contains("--kill") {
    exit(await runKillMode())
}

do {
    let start = ContinuousClock.now
    let violations: Int
    if let protocolName {
        guard let peer = PeerChaosProtocol.named(protocolName) else {
            say("chaos: unknown --protocol \(protocolName) (graphql-ws, socket.io, mqtt, phoenix or supabase)")
            exit(2)
        }
        let host = try await PeerHost.start(peer.server)
        say("chaos: \(peer.serverProtocol) against \(peer.server.name) on port \(host.port)")
        violations = try await runSchedules(
            makeSchedule: { PeerChaosStep.schedule(seed: $0, count: stepCount) },
            reset: { try await host.heal() },
            run: { scheduleSeed, auto, steps in
                try await PeerChaosRunner(host: host, peer: peer, seed: scheduleSeed, auto: auto, settle: settle).run(steps)
            }
        )
        await host.shutdown()
    } else {
        let host = try await ServerHost.start()
        violations = try await runSchedules(
            makeSchedule: { ChaosStep.schedule(seed: $0, count: stepCount) },
            reset: { await host.server.setFaults(.init()) },
            run: { scheduleSeed, auto, steps in
                try await ChaosRunner(host: host, seed: scheduleSeed, auto: auto, settle: settle).run(steps)
            }
        )
        await host.stop()
    }
    let elapsed = ContinuousClock.now - start
    say("chaos: ran \(schedules) schedules of \(stepCount) steps in \(elapsed.components.seconds) s")
    say("chaos: schedules=\(schedules) violations=\(violations) seed=\(seed)")
    exit(violations == 0 ? 0 : 1)
} catch {
    say("chaos: failed: \(error)")
    PeerServer.killAll()
    exit(2)
}

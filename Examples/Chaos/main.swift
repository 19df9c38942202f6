import Foundation
import ReferenceServer

// swift run -c release chaos [--schedules N] [--seed S] [--steps K] [--settle-ms MS]
// Drives sessions through seeded random schedules of lifecycle flips, host calls and real
// faults on the reference server, checking DESIGN.md's invariants after every step. A
// violation prints its seed and the shortest failing schedule found. Last line:
// `chaos: schedules=N violations=V seed=S`.

func option(_ name: String, default value: UInt64) -> UInt64 {
    let arguments = Array(CommandLine.arguments.dropFirst())
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let number = UInt64(arguments[index + 1]) else { return value }
    return number
}

let schedules = Int(option("--schedules", default: 100))
let seed = option("--seed", default: 1)
let stepCount = Int(option("--steps", default: 20))
let settle = Duration.milliseconds(Int64(option("--settle-ms", default: 30)))

/// Prints a line at once (stdout to a file is block-buffered: a hang would hide it).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Runs one schedule, or reports it as hung after `limit` (a hang is a violation too).
func runGuarded(_ runner: ChaosRunner, _ steps: [ChaosStep], limit: Duration = .seconds(120)) async throws -> [String] {
    try await withThrowingTaskGroup(of: [String]?.self) { group in
        group.addTask { try await runner.run(steps) }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        guard let first = try await group.next(), let found = first else {
            say("chaos: HANG — schedule with seed \(runner.seed) did not finish within \(limit): \(steps.map(\.description).joined(separator: "; "))")
            exit(3)
        }
        group.cancelAll()
        return found
    }
}

do {
    let host = try await ServerHost.start()
    var violations = 0
    let start = ContinuousClock.now
    for index in 0..<schedules {
        let scheduleSeed = seed &+ UInt64(index)
        let auto = scheduleSeed % 2 == 0
        let steps = ChaosStep.schedule(seed: scheduleSeed, count: stepCount)
        let runner = ChaosRunner(host: host, seed: scheduleSeed, auto: auto, settle: settle)
        let found = try await runGuarded(runner, steps)
        if (index + 1) % 100 == 0 { say("chaos: \(index + 1) schedules, \(violations) violations so far") }
        await host.server.setFaults(.init())
        guard !found.isEmpty else { continue }
        violations += 1
        say("chaos: VIOLATION in schedule \(index) (seed \(scheduleSeed), \(auto ? "auto" : "manual") mode):")
        for text in found { say("  - \(text)") }
        say("  schedule: \(steps.map(\.description).joined(separator: "; "))")
        // Shrink: drop steps one at a time while the schedule still fails.
        var shortest = steps
        var index = 0
        while index < shortest.count {
            var candidate = shortest
            candidate.remove(at: index)
            await host.server.setFaults(.init())
            if try await !runGuarded(runner, candidate).isEmpty {
                shortest = candidate
            } else {
                index += 1
            }
        }
        await host.server.setFaults(.init())
        say("  shortest failing schedule found (\(shortest.count) steps): \(shortest.map(\.description).joined(separator: "; "))")
    }
    await host.stop()
    let elapsed = ContinuousClock.now - start
    say("chaos: ran \(schedules) schedules of \(stepCount) steps in \(elapsed.components.seconds) s")
    say("chaos: schedules=\(schedules) violations=\(violations) seed=\(seed)")
    exit(violations == 0 ? 0 : 1)
} catch {
    say("chaos: failed: \(error)")
    exit(2)
}

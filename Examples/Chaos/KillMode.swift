import Foundation
import PeerServers

/// `chaos --kill [--protocol mqtt|supabase] [--schedules N] [--seed S]`: kill-and-relaunch
/// schedules (``KillRunner``) against the reference server, mosquitto with a persistent session,
/// or the Supabase peer's private channels. Last line: `chaos: kill schedules=N violations=V seed=S`. The exit code.
func runKillMode() async -> Int32 {
    let executable = Bundle.main.executablePath ?? CommandLine.arguments[0]
    do {
        let start = ContinuousClock.now
        guard let target = KillTarget(rawValue: protocolName ?? "tether") else {
            say("chaos: --kill runs against tether (the reference server), mqtt (mosquitto) or supabase (the Supabase peer), not \(protocolName ?? "")")
            return 2
        }
        let port: Int
        let stop: () async -> Void
        switch target {
        case .tether:
            let host = try await ServerHost.start()
            (port, stop) = (host.port, { await host.stop() })
        case .mqtt:
            let host = try await PeerHost.start(.mosquitto)
            (port, stop) = (host.port, { await host.shutdown() })
        case .supabase:
            let host = try await PeerHost.start(.app(.supabase, environment: [:]))
            (port, stop) = (host.port, { await host.shutdown() })
        }
        let server = switch target {
        case .tether: "the reference server"
        case .mqtt: "mosquitto, a persistent session"
        case .supabase: "the Supabase peer, private channels replayed by timestamp"
        }
        say("chaos: kill mode against \(server) on port \(port): the app in a process of its own, SIGKILLed and relaunched on its store")
        var violations = 0, launches = 0, midWrite = 0, tornEnds = 0, publishes = 0, messages = 0, redeliveries = 0
        for index in 0..<schedules {
            let scheduleSeed = seed &+ UInt64(index)
            let outcome = try await KillRunner(target: target, port: port, seed: scheduleSeed, schedule: index, executable: executable).run()
            launches += outcome.launches
            midWrite += outcome.killsMidWrite
            tornEnds += outcome.tornEnds
            publishes += outcome.publishes
            messages += outcome.messages
            redeliveries += outcome.redeliveries
            if !outcome.violations.isEmpty {
                violations += 1
                say("chaos: VIOLATION in kill schedule \(index) (seed \(scheduleSeed)):")
                for text in outcome.violations.prefix(20) { say("  - \(text)") }
                if outcome.violations.count > 20 { say("  … and \(outcome.violations.count - 20) more") }
            }
            if (index + 1) % 10 == 0 { say("chaos: \(index + 1) kill schedules, \(violations) violations so far") }
        }
        await stop()
        let elapsed = ContinuousClock.now - start
        say("chaos: \(schedules) kill schedules in \(elapsed.components.seconds) s: \(launches) launches (\(launches - schedules) killed: \(midWrite) mid-write, \(tornEnds) of those with the last record cut short as a power cut could), \(publishes) publishes, \(messages) messages handed (\(redeliveries) flagged redeliveries)")
        say("chaos: kill schedules=\(schedules) violations=\(violations) seed=\(seed)")
        return violations == 0 ? 0 : 1
    } catch {
        say("chaos: failed: \(error)")
        return 2
    }
}

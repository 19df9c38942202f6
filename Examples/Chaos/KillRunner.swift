import ConnectionPolicy
import Foundation
import NIOTransport
import SDK

/// The kill mode (`chaos --kill`): one schedule launches the app (``KillClient``, a process of
/// its own on a file store) again and again, SIGKILLs it at a random moment — mid-write
/// included — while it publishes and reads and the server's other clients publish, and finally
/// lets a launch run to the end. Then it checks what the app was told against what the server
/// applied and what every launch was handed (``KillChecks``).
struct KillRunner {
    let target: KillTarget
    let port: Int
    let seed: UInt64
    let schedule: Int
    let executable: String

    /// What a schedule did, and what it broke.
    struct Outcome {
        var violations: [String] = []
        var launches = 0
        /// Kills that came while a write to the store was under way (before its `fsync` returned).
        var killsMidWrite = 0
        /// Of those, the ones after which the runner cut the last record short (a power cut's torn end).
        var tornEnds = 0
        var publishes = 0
        var messages = 0
        var redeliveries = 0
    }

    func run() async throws -> Outcome {
        var random = SplitMix64(seed: seed)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-kill-\(getpid())-\(schedule)")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let channels = ["k\(schedule)-a", "k\(schedule)-b", "k\(schedule)-c"]

        // The server's other client: publishes while the app lives and while it is dead, and
        // sees every message applied, in the server's order.
        let observer = try await KillObserver.start(target: target, port: port, clientID: "kill-observer-\(getpid())-\(schedule)", channels: channels)
        defer { observer.stop() }

        var outcome = Outcome()
        var logs: [[String]] = []
        let kills = 3 + Int(random.next() % 4)
        for launch in 1...(kills + 1) {
            let isFinal = launch == kills + 1
            let log = directory.appendingPathComponent("launch-\(launch).log")
            let child = try KillChild(executable: executable, log: log, arguments: [
                "--kill-client", "--port", "\(port)", "--store", directory.appendingPathComponent("store").path,
                "--seed", "\(seed)", "--launch", "\(launch)", "--channels", channels.joined(separator: ","),
                "--protocol", target.rawValue, "--client-id", "kill-app-\(getpid())-\(schedule)",
            ] + (isFinal ? ["--final"] : []))
            if isFinal {
                if !(await waitUntil(.seconds(30), { child.lines().contains("ready") })) {
                    outcome.violations.append("launch \(launch) (the last) was not ready within 30 s")
                }
                await observer.stopPublishing()
                for channel in channels { await observer.publishFinal(to: channel) }
                if !(await succeeds(within: .seconds(90), { await child.exited(); return true })) {
                    outcome.violations.append("launch \(launch) (the last) did not finish within 90 s")
                    child.kill()
                    await child.exited()
                }
            } else {
                // The runner's publishes start once the app holds its channels.
                if launch == 1 || !observer.isPublishing {
                    _ = await waitUntil(.seconds(10), { child.lines().contains("ready") })
                    if child.lines().contains("ready") { observer.startPublishing(seed: seed) }
                }
                try? await Task.sleep(for: .milliseconds(Int64(random.next() % 600)))
                child.kill()
                await child.exited()
                let writes = child.lines().filter { $0.hasPrefix("writing") || $0 == "written" }
                if let last = writes.last, last.hasPrefix("writing") {
                    // Killed mid-write. A process kill leaves what `write` wrote in the page cache;
                    // a power cut need not: half the time, the runner cuts the last record at a
                    // random byte, as a power cut during this unacknowledged append could.
                    outcome.killsMidWrite += 1
                    let before = last.hasPrefix("writing append ") ? UInt64(last.dropFirst("writing append ".count)) : nil
                    if let before, random.next() % 2 == 0,
                        StoreFile.tear(directory.appendingPathComponent("store/session.tether"), after: before, random: &random)
                    {
                        outcome.tornEnds += 1
                    }
                }
                // Dead for a while: the others go on publishing.
                try? await Task.sleep(for: .milliseconds(Int64(random.next() % 200)))
            }
            logs.append(child.lines())
        }
        outcome.launches = logs.count
        let applied = await observer.received()
        for (channel, list) in applied {
            try? Data((list.joined(separator: "\n") + "\n").utf8).write(to: directory.appendingPathComponent("applied-\(channel).txt"))
        }
        var checks = KillChecks(applied: applied, channels: channels, launches: logs, atLeastOnce: target == .mqtt)
        checks.run()
        outcome.violations += checks.violations
        outcome.publishes = checks.publishCount
        outcome.messages = checks.messageCount
        outcome.redeliveries = checks.redeliveryCount
        if outcome.violations.isEmpty {
            try? FileManager.default.removeItem(at: directory)
        } else {
            say("  every launch's lines and the store are kept in \(directory.path)")
        }
        return outcome
    }
}

/// One launch of the app: a child process whose stdout goes to a file.
struct KillChild {
    let process: Process
    let log: URL
    private let ended: AsyncStream<Void>

    init(executable: String, log: URL, arguments: [String]) throws {
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let output = try FileHandle(forWritingTo: log)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = output
        let (ended, sink) = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in
            sink.finish()
        }
        try process.run()
        try? output.close()
        self.process = process
        self.log = log
        self.ended = ended
    }

    /// The lines the launch wrote so far (whole lines only).
    func lines() -> [String] {
        guard let data = FileManager.default.contents(atPath: log.path) else { return [] }
        var text = String(decoding: data, as: UTF8.self)
        if let last = text.lastIndex(of: "\n") { text = String(text[...last]) } else { return [] }
        return text.split(separator: "\n").map(String.init)
    }

    func kill() {
        _ = Foundation.kill(process.processIdentifier, SIGKILL)
    }

    func exited() async {
        for await _ in ended {}
    }
}

/// The store's file as a kill left it.
enum StoreFile {
    /// Cuts what an unacknowledged append added after `size` bytes at a random byte, as a power
    /// cut could: `false` when it had added nothing yet.
    static func tear(_ file: URL, after size: UInt64, random: inout SplitMix64) -> Bool {
        guard let handle = try? FileHandle(forWritingTo: file) else { return false }
        defer { try? handle.close() }
        guard let end = try? handle.seekToEnd(), end > size else { return false }
        let cut = size + random.next() % (end - size)
        return (try? handle.truncate(atOffset: cut)) != nil
    }
}

import Foundation
import NIOTransport

/// Prints timestamped narration and keeps the tally of checks.
final class Narrator: Sendable {
    private let start = ContinuousClock.now
    private let tally = Locked((passed: 0, failed: 0))

    var passed: Int { tally.withLock { $0.passed } }
    var failed: Int { tally.withLock { $0.failed } }

    var elapsed: Duration { ContinuousClock.now - start }

    func say(_ text: String) {
        print("[+\(Self.seconds(elapsed))] " + text)
    }

    /// "1.234 s", to the millisecond.
    static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction) s"
    }

    func section(_ title: String) {
        print("\n== \(title)")
    }

    /// Records a check; prints ✓ or ✗ with what was expected.
    @discardableResult
    func check(_ condition: Bool, _ description: String, detail: @autoclosure () -> String = "") -> Bool {
        tally.withLock { condition ? ($0.passed += 1) : ($0.failed += 1) }
        let extra = condition ? "" : "  — \(detail())"
        say("\(condition ? "✓" : "✗") \(description)\(extra)")
        return condition
    }
}

import SDK

/// Follows a session's status for the whole run (one consumer), so waits can time out without
/// ending the stream.
final class StatusWatcher: Sendable {
    private struct State {
        var seen: [ConnectionStatus] = []
        var cursor = 0
        var changed = OneShot()
    }

    private let state = Locked(State())
    private let narrator: Narrator

    init(narrator: Narrator) {
        self.narrator = narrator
    }

    /// Reads every status change until the session ends. Run it as a child task.
    func follow(_ session: Session) async {
        for await status in session.statusUpdates {
            narrator.say("  status → \(status)")
            let changed = state.withLock { state in
                state.seen.append(status)
                defer { state.changed = OneShot() }
                return state.changed
            }
            changed.fire()
        }
    }

    /// The next status (after those already waited past) matching `predicate`, within `timeout`.
    func wait(timeout: Duration = .seconds(5), for predicate: (ConnectionStatus) -> Bool) async -> ConnectionStatus? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (match, changed): (ConnectionStatus?, OneShot) = state.withLock { state in
                while state.cursor < state.seen.count {
                    let status = state.seen[state.cursor]
                    state.cursor += 1
                    if predicate(status) { return (status, state.changed) }
                }
                return (nil, state.changed)
            }
            if let match { return match }
            guard ContinuousClock.now < deadline else { return nil }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await changed.wait() }
                group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// Forgets statuses seen so far: the next wait looks only at what comes after.
    func skipSeen() {
        state.withLock { $0.cursor = $0.seen.count }
    }
}

/// Runs `body` with a session over the NIO transport running and a watcher narrating its status;
/// a scenario that throws is a failed check, and the session is shut down either way.
func withNarratedSession(
    _ settings: AppSettings, lifecycle: ManualLifecycleSource, narrator: Narrator, backgroundTime: any BackgroundTimeProvider = NoBackgroundTime(),
    limit: Duration = .seconds(60), _ body: (Session, StatusWatcher) async throws -> Void
) async throws {
    let session = Session(settings: settings, transport: NIOWebSocketTransport(), lifecycle: lifecycle, backgroundTime: backgroundTime)
    let watcher = StatusWatcher(narrator: narrator)
    // A scenario that cannot finish (a server that never lets the session connect, one that
    // never delivers) is ended after `limit` as a failed check, never left waiting: shutting the
    // session down ends its streams and fails what waits on it.
    let deadline = Task {
        try await Task.sleep(for: limit)
        narrator.check(false, "the scenario finished within \(limit)", detail: "status \(session.status)")
        await session.shutdown()
    }
    defer { deadline.cancel() }
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await watcher.follow(session) }
        group.addTask { await session.run() }
        do {
            try await body(session, watcher)
        } catch {
            narrator.check(false, "the scenario ran to the end", detail: "\(error)")
        }
        await session.shutdown()
        try await group.waitForAll()
    }
}

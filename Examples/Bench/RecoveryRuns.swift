import Foundation
import SDK

/// What every recovery bench measures, the same way: the app goes to the background, the old
/// connection is gone, the app stays away, returns, and the recovery report's duration (from
/// the return to fully recovered) is one sample.
struct RecoveryRuns {
    let settings: AppSettings
    let transport: any Transport
    let runs: Int
    /// How long the app stays away: long enough for the old socket's close to be over.
    let away: Duration

    /// Runs a session through the launch and `runs` returns; `subscribe` makes its subscriptions,
    /// `whenGone` waits until the old connection is gone, `beforeReturn` runs while the app is
    /// away, and `check` accepts each report (throwing ends the bench).
    func measure(
        subscribe: (Session) async throws -> [Subscription],
        whenGone: (Session) async throws -> Void,
        beforeReturn: (Int) async throws -> Void = { _ in },
        server: (any BenchServer)? = nil,
        check: (RecoveryReport) throws -> Void
    ) async throws -> RecoverySamples {
        let lifecycle = ManualLifecycleSource()
        let session = Session(settings: settings, transport: transport, lifecycle: lifecycle)
        var samples: [Duration] = []
        var cpu: [Duration] = []
        var serverCPU: [Duration] = []
        var framesIn: [Int] = []
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await session.run() }
            var reports = session.recoveryReports.makeAsyncIterator()
            let held = try await subscribe(session)
            _ = await reports.next()  // the launch's recovery
            for run in 0..<runs {
                await lifecycle.send(.background)
                try await whenGone(session)
                try await Task.sleep(for: away)
                try await beforeReturn(run)
                let serverBefore = try await server?.counters()
                let cpuBefore = Self.processCPUTime()
                await lifecycle.send(.active)
                guard let report = await reports.next() else { throw SessionError(.sessionEnded, "no recovery report") }
                cpu.append(Self.processCPUTime() - cpuBefore)
                // What the server spent and sent for this recovery (asked after the client's CPU
                // is read: the asking is not the client's recovery).
                if let serverBefore, let after = try await server?.counters() {
                    if let start = serverBefore.cpu, let end = after.cpu { serverCPU.append(end - start) }
                    framesIn.append(after.framesSent - serverBefore.framesSent)
                }
                try check(report)
                samples.append(report.duration)
            }
            withExtendedLifetime(held) {}
            await session.shutdown()
            group.cancelAll()
        }
        return RecoverySamples(sorted: samples.sorted(), cpu: cpu.sorted(), serverCPU: serverCPU.sorted(), framesIn: framesIn.sorted())
    }

    /// The CPU time this process (every thread) has used: the client's, since the server and
    /// the delaying proxy run in processes of their own.
    static func processCPUTime() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }
}

/// Recovery durations, sorted.
struct RecoverySamples {
    let sorted: [Duration]
    /// The client process's CPU time in each recovery (from the return to the report), sorted.
    var cpu: [Duration] = []
    /// The server process's CPU time in each, sorted (empty when it cannot be told).
    var serverCPU: [Duration] = []
    /// The frames the server sent in each, sorted (empty when not asked).
    var framesIn: [Int] = []

    var median: Duration { sorted[sorted.count / 2] }
    var cpuMedian: Duration? { cpu.isEmpty ? nil : cpu[cpu.count / 2] }
    var serverCPUMedian: Duration? { serverCPU.isEmpty ? nil : serverCPU[serverCPU.count / 2] }
    var framesInMedian: Int? { framesIn.isEmpty ? nil : framesIn[framesIn.count / 2] }

    /// "median M ms = R RTT …(min A, max B)", with `note` between the two.
    func summary(rtt: Duration, note: String = "") -> String {
        "median \(median.milliseconds.formatted(1)) ms = \((median.milliseconds / rtt.milliseconds).formatted(2)) RTT\(note) "
            + "(min \(sorted[0].milliseconds.formatted(1)), max \(sorted[sorted.count - 1].milliseconds.formatted(1)))"
            + (cpuMedian.map { "; client CPU median \($0.milliseconds.formatted(1)) ms" } ?? "")
    }
}

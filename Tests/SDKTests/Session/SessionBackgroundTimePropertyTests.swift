import ConnectionPolicy
import SDK
import SDKTesting
import Testing

/// Issue 11's invariants over seeded random walks on the test clock — lifecycle flips, host
/// calls, time passing, dropped connections, the OS taking the time back or having none: after
/// every step the session holds background time exactly when it needs it (never in the
/// foreground, never while disconnected and flushed), never two grants, every begin matched by
/// one end, and nothing held after shutdown.
@Suite("Session: background time invariants (property)", .timeLimit(.minutes(2)))
struct SessionBackgroundTimePropertyTests {
    @Test("random walks keep background time balanced", arguments: [false, true])
    func randomWalks(auto: Bool) async throws {
        var grants = 0, settledChecks = 0
        for seed in UInt64(1)...40 {
            let (problems, begun, checked) = try await walk(seed: seed &* 7919 &+ (auto ? 1 : 0), auto: auto)
            #expect(problems.isEmpty, "seed \(seed): \(problems)")
            grants += begun
            settledChecks += checked
        }
        #expect(settledChecks >= 400, "the settled oracle ran often enough to say something (\(settledChecks) checks)")
        #expect(grants >= 40, "the walks hold background time often enough to say something (\(grants) grants)")
    }

    func walk(seed: UInt64, auto: Bool, steps: Int = 30) async throws -> (problems: [String], begun: Int, checked: Int) {
        var checked = 0
        var random = SplitMix64(seed: seed)
        let server = TestServer(), clock = TestClock(), lifecycle = LifecycleDriver(), time = TestBackgroundTime()
        let settings = try AppSettings.testing(auto: auto) { $0.backgroundGrace(.seconds(Int64(random.next() % 3) * 5)) }
        let session = Session(settings: settings, transport: server.transport(), clock: clock, lifecycle: lifecycle, backgroundTime: time)
        var problems: [String] = []
        var calls: [Task<Void, Never>] = []
        let callsRunning = Locked(0)
        /// A host call in a task of its own, counted until it returns.
        func call(_ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
            callsRunning.withLock { $0 += 1 }
            return Task {
                await body()
                callsRunning.withLock { $0 -= 1 }
            }
        }
        try await withRunningSession(session) { _ in
            for index in 0..<steps {
                let step: String
                switch random.next() % 10 {
                case 0, 1: step = "background"; await lifecycle.background()
                case 2, 3: step = "foreground"; await lifecycle.foreground()
                case 4: step = "connect"; calls.append(call { _ = try? await session.connect() })
                case 5: step = "disconnect"; await session.disconnect()
                case 6: step = "ping"; calls.append(call { _ = try? await session.ping() })
                case 7:
                    let seconds = Int64(random.next() % 40)
                    step = "advance \(seconds) s"
                    await clock.advance(by: .seconds(seconds))
                case 8:
                    step = random.next() % 2 == 0 ? "OS expires the time" : "server drops"
                    if step == "server drops" { server.dropAllConnections() } else { time.expireAll() }
                default:
                    step = "refresh"
                    calls.append(call { _ = try? await session.refresh(within: .seconds(20)) })
                }
                // Independent of the session's own bookkeeping: what the app can see.
                if step == "foreground", time.heldCount != 0 { problems.append("after step \(index + 1): held in the foreground") }
                if step == "background", session.status == .connected, time.heldCount != 1 {
                    problems.append("after step \(index + 1): connected in the background without background time")
                }
                // Independent of the session's bookkeeping too: once everything has settled and
                // no host call is under way, time is held exactly while the server sees a socket
                // of a backgrounded app (every close written by then).
                await clock.settle()
                if callsRunning.withLock({ $0 }) == 0 {
                    let shouldHold = !lifecycle.state.isForeground && server.openConnectionCount > 0
                    if time.heldCount != (shouldHold ? 1 : 0) {
                        problems.append("after step \(index + 1) (\(step)), settled: held \(time.heldCount), server sockets \(server.openConnectionCount), app \(lifecycle.state)")
                    }
                    checked += 1
                }
                if let problem = await session.backgroundTimeProblem { problems.append("after step \(index + 1) (\(step)): \(problem)") }
                if time.heldCount > 1 { problems.append("after step \(index + 1) (\(step)): \(time.heldCount) grants held") }
                if time.doubleEndCount > 0 { problems.append("after step \(index + 1) (\(step)): a grant ended twice") }
                let counts = time.counts  // one snapshot: host calls may still be running
                if counts.begun - counts.ended != counts.held { problems.append("after step \(index + 1): begun/ended out of balance (\(counts))") }
            }
        }
        for call in calls { await call.value }
        if time.heldCount != 0 || time.begunCount != time.endedCount || time.doubleEndCount != 0 {
            problems.append("after shutdown: held \(time.heldCount), begun \(time.begunCount), ended \(time.endedCount), double ends \(time.doubleEndCount)")
        }
        return (problems, time.begunCount, checked)
    }
}

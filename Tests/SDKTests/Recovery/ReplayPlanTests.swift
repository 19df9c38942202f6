@testable import SDK
import Testing

@Suite("ReplayPlan")
struct ReplayPlanTests {
    let a = RecoveryStepID.subscription("a")
    let b = RecoveryStepID.subscription("b")
    let presence = RecoveryStepID.custom("presence")
    let typing = RecoveryStepID.custom("typing")

    func plan(_ mode: ReplayMode = .pipelined, limit: Int = 3) -> ReplayPlan {
        ReplayPlan(
            steps: [
                .init(id: a, prerequisites: [.authenticated]),
                .init(id: b, prerequisites: [.authenticated]),
                .init(id: presence, prerequisites: [a]),
                .init(id: typing, prerequisites: [presence, b]),
            ],
            mode: mode,
            attemptLimit: limit
        )
    }

    @Test("pipelined: independent steps go out together; a step waits only for its prerequisites")
    func pipelined() {
        var replay = plan()
        #expect(replay.start() == [.perform(a, attempt: 1), .perform(b, attempt: 1)])
        #expect(replay.succeeded(a) == [.perform(presence, attempt: 1)])
        #expect(replay.succeeded(presence) == [])
        #expect(replay.succeeded(b) == [.perform(typing, attempt: 1)])
        #expect(replay.succeeded(typing) == [.finished])
        #expect(replay.isFinished)
    }

    @Test("sequential: one step at a time, in journal order")
    func sequential() {
        var replay = plan(.sequential)
        #expect(replay.start() == [.perform(a, attempt: 1)])
        #expect(replay.succeeded(a) == [.perform(b, attempt: 1)])
        #expect(replay.succeeded(b) == [.perform(presence, attempt: 1)])
        #expect(replay.succeeded(presence) == [.perform(typing, attempt: 1)])
        #expect(replay.succeeded(typing) == [.finished])
    }

    @Test("a failed attempt is retried up to the limit, then fails for good")
    func retries() {
        var replay = plan(limit: 3)
        _ = replay.start()
        #expect(replay.failed(b, reason: "x") == [.perform(b, attempt: 2)])
        #expect(replay.failed(b, reason: "x") == [.perform(b, attempt: 3)])
        #expect(replay.failed(b, reason: "busy") == [.failed(b, reason: "busy"), .failed(typing, reason: "prerequisite subscribe:b failed")])
        #expect(replay.state(of: b) == .failed(reason: "busy", attempts: 3))
    }

    @Test("a step that fails for good fails its dependents and blocks nothing else")
    func isolation() {
        var replay = plan(limit: 1)
        _ = replay.start()
        #expect(replay.failed(b, reason: "no") == [.failed(b, reason: "no"), .failed(typing, reason: "prerequisite subscribe:b failed")])
        // a and presence carry on.
        #expect(replay.succeeded(a) == [.perform(presence, attempt: 1)])
        #expect(replay.succeeded(presence) == [.finished])
    }

    @Test("a stale report (a step not running) changes nothing")
    func stale() {
        var replay = plan()
        _ = replay.start()
        #expect(replay.succeeded(typing) == [])
        #expect(replay.failed(presence, reason: "late") == [])
    }

    @Test("removing a step mid-replay lets the rest finish; its dependents fail")
    func removal() {
        var replay = plan()
        _ = replay.start()
        #expect(replay.remove(b) == [.failed(typing, reason: "prerequisite subscribe:b failed")])
        #expect(replay.succeeded(a) == [.perform(presence, attempt: 1)])
        #expect(replay.succeeded(presence) == [.finished])
    }

    @Test("an empty journal finishes at once")
    func empty() {
        var replay = ReplayPlan(steps: [], mode: .pipelined, attemptLimit: 3)
        #expect(replay.start() == [.finished])
        #expect(replay.succeeded(a) == [])
    }
}

public import SDK

/// A scriptable `BackgroundTimeProvider`: counts what is asked for and ended, expires the
/// held time on demand (as iOS does when the budget runs out), and records anything a correct
/// session never does — ending a grant twice.
public final class TestBackgroundTime: BackgroundTimeProvider {
    private struct Grant {
        let name: String
        let expired: @Sendable () -> Void
    }

    private struct State {
        var held: [UInt64: Grant] = [:]
        var nextID: UInt64 = 0
        var begun = 0
        var ended = 0
        var doubleEnds = 0
        var refusesTime = false
        var waiters = CountWaiters(.exactly)
    }

    private let state = Locked(State())

    /// Background time that nothing holds yet.
    public init() {}

    /// Grants held now (a correct session: 0 or 1).
    public var heldCount: Int { state.withLock { $0.held.count } }
    /// Grants begun in all.
    public var begunCount: Int { state.withLock { $0.begun } }
    /// Grants ended in all (each once).
    public var endedCount: Int { state.withLock { $0.ended } }
    /// Times a grant was ended again (a correct session: 0).
    public var doubleEndCount: Int { state.withLock { $0.doubleEnds } }
    /// Grants begun, ended and held, read together (one lock): a check of their balance that reads
    /// them one by one can see a grant begun and not yet counted held, while a host call runs.
    public var counts: (begun: Int, ended: Int, held: Int) { state.withLock { ($0.begun, $0.ended, $0.held.count) } }
    /// The names the held grants were asked for under.
    public var heldNames: [String] { state.withLock { $0.held.values.map(\.name) } }

    /// When set, every new grant expires at once (the OS has no time left to give).
    public func setRefusingTime(_ refusing: Bool) {
        state.withLock { $0.refusesTime = refusing }
    }

    public func begin(_ name: String, expired: @escaping @Sendable () -> Void) -> any BackgroundTimeGrant {
        let (id, refuse): (UInt64, Bool) = state.withLock { state in
            state.nextID += 1
            state.begun += 1
            state.held[state.nextID] = Grant(name: name, expired: expired)
            return (state.nextID, state.refusesTime)
        }
        notifyWaiters()
        if refuse { expired() }
        return TestGrant(id: id, owner: self)
    }

    /// The OS takes back every grant held now: their expiration handlers run (they stay held
    /// until the session ends them).
    public func expireAll() {
        let handlers = state.withLock { $0.held.values.map(\.expired) }
        for handler in handlers { handler() }
    }

    /// Waits until exactly `count` grants are held, at most `timeout` of real time (for runs on
    /// real sockets; with the test clock, wait for the session's status instead); false on timeout.
    public func waitForHeld(_ count: Int, timeout: Duration) async -> Bool {
        guard let signal = state.withLock({ $0.waiters.register(target: count, count: $0.held.count) }) else { return true }
        return await signal.wait(upTo: timeout) || heldCount == count
    }

    fileprivate func ended(_ id: UInt64) {
        state.withLock { state in
            if state.held.removeValue(forKey: id) == nil {
                state.doubleEnds += 1
            } else {
                state.ended += 1
            }
        }
        notifyWaiters()
    }

    private func notifyWaiters() {
        let ready = state.withLock { state in state.waiters.ready(count: state.held.count) }
        for signal in ready { signal.fire() }
    }

    private struct TestGrant: BackgroundTimeGrant {
        let id: UInt64
        let owner: TestBackgroundTime

        func end() { owner.ended(id) }
    }
}

import ConnectionPolicy
import Testing

/// Plays a policy against a model of the socket and the timers, the way the session would, and
/// records what it did. It refuses what the world would refuse: an `openConnection` while a
/// connection is open or opening is recorded as a double-socket violation.
struct PolicyHarness<Policy: SessionPolicy> {
    enum Socket: Equatable { case closed, opening, open }

    var policy: Policy
    private(set) var socket: Socket = .closed
    private(set) var armed: [TimerID: (timer: PolicyTimer, delay: Duration)] = [:]
    private(set) var opens = 0
    private(set) var doubleSocketRequests = 0
    private(set) var lastCloseReason: DisconnectReason?
    private(set) var log: [PolicyAction] = []

    init(_ policy: Policy, context: PolicyContext = PolicyContext(lifecycle: .active)) {
        self.policy = policy
        apply(self.policy.start(in: context))
    }

    mutating func apply(_ actions: [PolicyAction]) {
        log += actions
        for action in actions {
            switch action {
            case .openConnection:
                if socket != .closed { doubleSocketRequests += 1 }
                socket = .opening
                opens += 1
            case .closeConnection(let reason):
                socket = .closed
                lastCloseReason = reason
            case .armTimer(let timer, let delay):
                armed[timer.id] = (timer, delay)
            case .cancelTimer(let timer):
                if armed[timer.id]?.timer == timer { armed[timer.id] = nil }
            }
        }
    }

    @discardableResult
    mutating func send(_ event: (inout Policy) -> [PolicyAction]) -> [PolicyAction] {
        let actions = event(&policy)
        apply(actions)
        return actions
    }

    /// The pending open succeeds.
    mutating func completeOpen() {
        precondition(socket == .opening, "no open pending")
        socket = .open
        send { $0.connectionOpened() }
    }

    /// The armed timer `id` fires.
    @discardableResult
    mutating func fire(_ id: TimerID) -> [PolicyAction] {
        guard let entry = armed[id] else {
            Issue.record("timer \(id) is not armed")
            return []
        }
        armed[id] = nil
        return send { $0.timerFired(entry.timer) }
    }

    /// The open connection (or the pending attempt) ends without the policy asking.
    @discardableResult
    mutating func lose(_ loss: ConnectionLoss) -> [PolicyAction] {
        socket = .closed
        return send { $0.connectionLost(loss) }
    }
}

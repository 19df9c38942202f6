/// The replay of a journal after a reconnect, as a pure state machine: a step starts once its
/// prerequisites succeeded (all such steps at once when pipelined, one at a time when
/// sequential); a failed attempt is retried up to `attemptLimit`; a step that fails for good is
/// reported, fails the steps that need it, and blocks nothing else. The owner performs the
/// `perform` actions and feeds back `succeeded` / `failed`.
struct ReplayPlan: Sendable {
    enum Action: Hashable, Sendable {
        /// Perform a step (attempt 1 is the first).
        case perform(RecoveryStepID, attempt: Int)
        /// The step failed for good.
        case failed(RecoveryStepID, reason: String)
        /// Every step has settled (emitted once).
        case finished
    }

    enum StepState: Hashable, Sendable {
        case waiting
        case running(attempt: Int)
        case succeeded(attempts: Int)
        case failed(reason: String, attempts: Int)
    }

    struct Step: Hashable, Sendable {
        let id: RecoveryStepID
        let prerequisites: [RecoveryStepID]
    }

    private(set) var order: [RecoveryStepID]
    /// Every change goes through ``set(_:_:)``, which keeps the counts.
    private(set) var states: [RecoveryStepID: StepState] = [:]
    /// Steps waiting and steps settled, so that an event in a replay of hundreds of steps does
    /// not scan them all when nothing waits.
    private var waitingCount = 0
    private var settledCount = 0
    private let prerequisites: [RecoveryStepID: [RecoveryStepID]]
    let mode: ReplayMode
    let attemptLimit: Int
    private(set) var isFinished = false

    init(steps: [Step], mode: ReplayMode, attemptLimit: Int) {
        var seen: Set<RecoveryStepID> = []
        self.order = steps.map(\.id).filter { seen.insert($0).inserted }
        self.prerequisites = Dictionary(steps.map { ($0.id, $0.prerequisites) }, uniquingKeysWith: { first, _ in first })
        self.mode = mode
        self.attemptLimit = max(attemptLimit, 1)
        for step in steps where states[step.id] == nil { set(step.id, .waiting) }
    }

    private mutating func set(_ id: RecoveryStepID, _ state: StepState?) {
        func count(_ state: StepState?, _ delta: Int) {
            switch state {
            case .waiting?: waitingCount += delta
            case .succeeded?, .failed?: settledCount += delta
            case .running?, nil: break
            }
        }
        count(states[id], -1)
        count(state, 1)
        states[id] = state
    }

    func state(of id: RecoveryStepID) -> StepState? { states[id] }

    /// Indicates that every step has settled, or is running and `mayRun` allows it.
    func isSettled(exceptRunning mayRun: (RecoveryStepID) -> Bool) -> Bool {
        order.allSatisfy { id in
            switch states[id] {
            case .succeeded, .failed: true
            case .running: mayRun(id)
            case .waiting, nil: false
            }
        }
    }

    /// Starts the replay.
    mutating func start() -> [Action] { advance() }

    mutating func succeeded(_ id: RecoveryStepID) -> [Action] {
        guard case .running(let attempt) = states[id] else { return [] }
        set(id, .succeeded(attempts: attempt))
        return advance()
    }

    mutating func failed(_ id: RecoveryStepID, reason: String) -> [Action] {
        guard case .running(let attempt) = states[id] else { return [] }
        if attempt < attemptLimit {
            set(id, .running(attempt: attempt + 1))
            return [.perform(id, attempt: attempt + 1)]
        }
        set(id, .failed(reason: reason, attempts: attempt))
        return [.failed(id, reason: reason)] + advance()
    }

    /// The app dropped the step (unsubscribed) during the replay: it no longer counts.
    mutating func remove(_ id: RecoveryStepID) -> [Action] {
        guard states[id] != nil else { return [] }
        set(id, nil)
        order.removeAll { $0 == id }
        return advance()
    }

    private func prerequisiteState(_ id: RecoveryStepID) -> StepState? {
        if id.isImplicit { return .succeeded(attempts: 1) }
        return states[id]
    }

    private mutating func advance() -> [Action] {
        guard !isFinished else { return [] }
        var actions: [Action] = []
        guard waitingCount > 0 else {
            if settledCount == order.count {
                isFinished = true
                actions.append(.finished)
            }
            return actions
        }
        // A step whose prerequisite failed (or is unknown) fails too, transitively.
        var changed = true
        while changed {
            changed = false
            for id in order where states[id] == .waiting {
                for prerequisite in prerequisites[id] ?? [] {
                    switch prerequisiteState(prerequisite) {
                    case .failed, nil:
                        let reason = "prerequisite \(prerequisite) failed"
                        set(id, .failed(reason: reason, attempts: 0))
                        actions.append(.failed(id, reason: reason))
                        changed = true
                    default:
                        continue
                    }
                    break
                }
            }
        }
        var running = order.filter { if case .running = states[$0] { true } else { false } }.count
        for id in order where states[id] == .waiting {
            if mode == .sequential, running > 0 { break }
            let ready = (prerequisites[id] ?? []).allSatisfy {
                if case .succeeded = prerequisiteState($0) { true } else { false }
            }
            guard ready else { continue }
            set(id, .running(attempt: 1))
            actions.append(.perform(id, attempt: 1))
            running += 1
        }
        if settledCount == order.count {
            isFinished = true
            actions.append(.finished)
        }
        return actions
    }
}

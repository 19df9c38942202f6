/// The replay of a journal after a reconnect, as a pure state machine: a step starts once its
/// prerequisites succeeded (all such steps at once when pipelined, one at a time when
/// sequential); a failed attempt is retried up to `attemptLimit`; a step that fails for good is
/// reported, fails the steps that need it, and blocks nothing else. The owner performs the
/// `perform` actions and feeds back `succeeded` / `failed`.
package struct ReplayPlan: Sendable {
    package enum Action: Hashable, Sendable {
        /// Perform a step (attempt 1 is the first).
        case perform(RecoveryStepID, attempt: Int)
        /// The step failed for good.
        case failed(RecoveryStepID, reason: String)
        /// Every step has settled (emitted once).
        case finished
    }

    package enum StepState: Hashable, Sendable {
        case waiting
        case running(attempt: Int)
        case succeeded(attempts: Int)
        case failed(reason: String, attempts: Int)
    }

    package struct Step: Hashable, Sendable {
        package let id: RecoveryStepID
        package let prerequisites: [RecoveryStepID]

        package init(id: RecoveryStepID, prerequisites: [RecoveryStepID]) {
            self.id = id
            self.prerequisites = prerequisites
        }
    }

    /// A step's prerequisite, resolved once: one of the two implicit steps (done before any
    /// replay), a step of this plan (by position), or a step the plan does not have.
    private enum Requirement: Sendable {
        case implicit
        case step(Int)
        case unknown

        init(_ id: RecoveryStepID, in positions: [Key: Int]) {
            if id.isImplicit {
                self = .implicit
            } else if let position = positions[Key(id)] {
                self = .step(position)
            } else {
                self = .unknown
            }
        }
    }

    /// A step as the plan finds it: a subscription's by its channel (shorter than its name, and
    /// found without building one), any other by its id.
    private enum Key: Hashable {
        case subscription(String)
        case other(RecoveryStepID)

        init(_ id: RecoveryStepID) { self = id.subscribedChannel.map(Key.subscription) ?? .other(id) }
    }

    // The steps by position, in journal order: each event looks its step up once, and the
    // replay's passes run over arrays (a step's id is a string; a replay of a thousand steps
    // hashed it a dozen times per step).
    private let ids: [RecoveryStepID]
    private let positions: [Key: Int]
    private let prerequisites: [[(id: RecoveryStepID, requirement: Requirement)]]
    /// `nil` once the step is removed. Every change goes through ``set(_:_:)``, which keeps the
    /// counts.
    private var states: [StepState?]
    /// Steps waiting, running and settled, and steps not removed, so that an event in a replay
    /// of hundreds of steps does not scan them all when nothing waits.
    private var waitingCount = 0
    private var runningCount = 0
    private var settledCount = 0
    private var liveCount = 0
    let mode: ReplayMode
    let attemptLimit: Int
    private(set) var isFinished = false

    package init(steps: [Step], mode: ReplayMode, attemptLimit: Int) {
        var positions: [Key: Int] = [:]
        positions.reserveCapacity(steps.count)
        var unique: [Step] = []
        unique.reserveCapacity(steps.count)
        // The first step with an id counts (its prerequisites too): one hash per step.
        for step in steps {
            let key = Key(step.id)
            if let first = positions.updateValue(unique.count, forKey: key) {
                positions[key] = first
                continue
            }
            unique.append(step)
        }
        self.ids = unique.map(\.id)
        self.positions = positions
        // Steps with the same prerequisites (every subscription's: after authentication) share
        // one resolved list: one array, not one per step.
        var resolved: (of: [RecoveryStepID], as: [(id: RecoveryStepID, requirement: Requirement)])?
        self.prerequisites = unique.map { step in
            if let resolved, resolved.of == step.prerequisites { return resolved.as }
            let list = step.prerequisites.map { ($0, Requirement($0, in: positions)) }
            resolved = (step.prerequisites, list)
            return list
        }
        self.states = Array(repeating: nil, count: unique.count)
        self.mode = mode
        self.attemptLimit = max(attemptLimit, 1)
        for position in unique.indices { set(position, .waiting) }
    }

    /// The steps not removed, in journal order.
    var order: [RecoveryStepID] { ids.indices.compactMap { states[$0] == nil ? nil : ids[$0] } }

    /// The steps not removed and their states, in journal order (read from the arrays: a
    /// recovery's report of a thousand steps looked each one up by its id).
    var stepsWithStates: [(id: RecoveryStepID, state: StepState)] {
        ids.indices.compactMap { position in states[position].map { (ids[position], $0) } }
    }

    private mutating func set(_ position: Int, _ state: StepState?) {
        func count(_ state: StepState?, _ delta: Int) {
            switch state {
            case .waiting?: waitingCount += delta
            case .running?: runningCount += delta
            case .succeeded?, .failed?: settledCount += delta
            case nil: liveCount -= delta
            }
        }
        count(states[position], -1)
        count(state, 1)
        states[position] = state
    }

    func state(of id: RecoveryStepID) -> StepState? { positions[Key(id)].flatMap { states[$0] } }

    /// Indicates that every step has settled, or is running and `mayRun` allows it.
    func isSettled(exceptRunning mayRun: (RecoveryStepID) -> Bool) -> Bool {
        states.indices.allSatisfy { position in
            switch states[position] {
            case .succeeded?, .failed?, nil: true
            case .running?: mayRun(ids[position])
            case .waiting?: false
            }
        }
    }

    /// Starts the replay.
    package mutating func start() -> [Action] { advance() }

    package mutating func succeeded(_ id: RecoveryStepID) -> [Action] { succeeded(at: positions[Key(id)]) }

    /// The step of the subscription to `channel` succeeded (found by the channel: a replay's
    /// thousand answers build no step id).
    package mutating func succeeded(subscriptionOf channel: String) -> [Action] { succeeded(at: positions[.subscription(channel)]) }

    private mutating func succeeded(at position: Int?) -> [Action] {
        guard let position, case .running(let attempt)? = states[position] else { return [] }
        set(position, .succeeded(attempts: attempt))
        return advance()
    }

    mutating func failed(_ id: RecoveryStepID, reason: String) -> [Action] {
        guard let position = positions[Key(id)], case .running(let attempt)? = states[position] else { return [] }
        if attempt < attemptLimit {
            set(position, .running(attempt: attempt + 1))
            return [.perform(id, attempt: attempt + 1)]
        }
        set(position, .failed(reason: reason, attempts: attempt))
        return [.failed(id, reason: reason)] + advance()
    }

    /// The app dropped the step (unsubscribed) during the replay: it no longer counts.
    mutating func remove(_ id: RecoveryStepID) -> [Action] {
        guard let position = positions[Key(id)], states[position] != nil else { return [] }
        set(position, nil)
        return advance()
    }

    /// A removed step, or one the plan does not have, counts as failed for the steps that need it.
    private func outcome(of requirement: Requirement) -> StepState? {
        switch requirement {
        case .implicit: .succeeded(attempts: 1)
        case .step(let position): states[position]
        case .unknown: nil
        }
    }

    private mutating func advance() -> [Action] {
        guard !isFinished else { return [] }
        var actions: [Action] = []
        guard waitingCount > 0 else {
            if settledCount == liveCount {
                isFinished = true
                actions.append(.finished)
            }
            return actions
        }
        // A step whose prerequisite failed (or is unknown) fails too, transitively.
        var changed = true
        while changed {
            changed = false
            for position in states.indices where states[position] == .waiting {
                for prerequisite in prerequisites[position] {
                    switch outcome(of: prerequisite.requirement) {
                    case .failed?, nil:
                        let reason = "prerequisite \(prerequisite.id) failed"
                        set(position, .failed(reason: reason, attempts: 0))
                        actions.append(.failed(ids[position], reason: reason))
                        changed = true
                    default:
                        continue
                    }
                    break
                }
            }
        }
        var running = runningCount
        for position in states.indices where states[position] == .waiting {
            if mode == .sequential, running > 0 { break }
            let ready = prerequisites[position].allSatisfy {
                if case .succeeded? = outcome(of: $0.requirement) { true } else { false }
            }
            guard ready else { continue }
            set(position, .running(attempt: 1))
            actions.append(.perform(ids[position], attempt: 1))
            running += 1
        }
        if settledCount == liveCount {
            isFinished = true
            actions.append(.finished)
        }
        return actions
    }
}

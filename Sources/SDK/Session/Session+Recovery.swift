extension Session {
    /// One recovery in progress: from its trigger, across any failed attempts, to fully
    /// recovered. What it waits for on one socket (the replay, the catch-ups, the outbox flush,
    /// the app's steps running) is that socket's (``SocketReplay``), and goes with it.
    struct Recovery {
        let trigger: RecoveryReport.Trigger
        let startedAt: SessionClock.Instant
        var connectionAttempts = 0
        /// Steps never performed before this recovery; every other step's run is a replay.
        /// (Kept as the exceptions: a reconnect's thousand resubscribes are all replays, and a
        /// set of them cost a thousand string hashes to build and as many to read.)
        var firstRuns: Set<RecoveryStepID> = []

        /// Indicates that `id` was never performed before this recovery.
        func isFirstRun(_ id: RecoveryStepID) -> Bool { !firstRuns.isEmpty && firstRuns.contains(id) }

        var caughtUp: [String: Int] = [:]
        var gaps: Set<String> = []
        var refetch: Set<String> = []
        var flushed = 0
        /// Channels resumed from a position an earlier launch stored: how long ago it was.
        var reachedBack: [String: Duration] = [:]
    }

    /// What the next recovery report will say: what triggered it (the latest reason to connect)
    /// and whether its connection and authentication are replays (a connection came before).
    struct NextRecovery {
        var trigger: RecoveryReport.Trigger = .launch
        var isReplay = false
    }

    /// Set while one of this session's recovery steps runs (the step's task and its children),
    /// so the step's publishes are not queued behind the outbox that waits for it.
    @TaskLocal static var recoveryStepOwner: ObjectIdentifier?

    /// Performs an app-defined step as its session's (see ``recoveryStepOwner``).
    static func perform(_ step: @Sendable (RecoveryStepContext) async throws -> Void, _ context: RecoveryStepContext) async throws {
        try await $recoveryStepOwner.withValue(ObjectIdentifier(context.session)) { try await step(context) }
    }

    /// Adds a step to the journal.steps, replayed after every reconnect once its prerequisites are
    /// done (by default, once authenticated). Connected, it is performed now and this call
    /// returns its result (a failure records nothing); not connected, it is recorded and
    /// performed with the next connection. Prerequisites must be steps the journal.steps holds.
    public func addRecoveryStep(
        _ name: String,
        after prerequisites: [RecoveryStepID] = [.authenticated],
        perform: @escaping @Sendable (RecoveryStepContext) async throws -> Void
    ) async throws {
        try refuseIfEnded("addRecoveryStep")
        ensureStarted()
        let id = RecoveryStepID.custom(name)
        guard !name.isEmpty, !journal.steps.contains(id) else {
            throw SessionError(.invalidArgument, "a recovery step needs a new, non-empty name (got '\(name)')")
        }
        for prerequisite in prerequisites where !prerequisite.isImplicit && !journal.steps.contains(prerequisite) {
            throw SessionError(.invalidArgument, "unknown prerequisite \(prerequisite) for step \(name)")
        }
        if case .open = link, recovery == nil {
            try await Self.perform(perform, RecoveryStepContext(session: self, isReplay: false, attempt: 1))
            guard !journal.steps.contains(id) else { return }
            journal.custom[id] = CustomStep(prerequisites: prerequisites, perform: perform, hasRun: true)
        } else {
            journal.custom[id] = CustomStep(prerequisites: prerequisites, perform: perform)
        }
        appendToJournal(id)
    }

    /// Removes an app-defined step from the journal.steps.
    public func removeRecoveryStep(_ name: String) {
        let id = RecoveryStepID.custom(name)
        guard journal.custom.removeValue(forKey: id) != nil else { return }
        removeFromJournal { $0 == id }
        cancelCustomRun(id)
        replayEvent { $0.remove(id) }
    }

    /// The journal.steps: the significant steps the session replays after a reconnect, in order.
    public nonisolated var recoveryJournal: [RecoveryStepID] { [.connected, .authenticated] + diagnostics.current.journal }

    // MARK: Internals

    /// A new connection attempt: start a recovery if none is running.
    func recoveryAttemptStarted() {
        if recovery == nil { recovery = Recovery(trigger: next.trigger, startedAt: clock.now) }
        recovery?.connectionAttempts += 1
        next.trigger = .reconnect
    }

    /// The session gave up connecting (a final disconnect): no recovery to report.
    func abandonRecovery() {
        guard recovery != nil else { return }
        recovery = nil
        guard let connection = link.connection, let replay = connection.replay else { return }
        for id in replay.customRuns.keys { cancelTimer(SocketTimer.recoveryStep(id)) }
        connection.replay?.cancelRuns()
        connection.replay = nil
    }

    /// Authenticated: replay the journal.steps.
    func startReplay() {
        if recovery == nil { recovery = Recovery(trigger: next.trigger, startedAt: clock.now, connectionAttempts: 1) }
        var steps: [ReplayPlan.Step] = []
        var firstRuns: Set<RecoveryStepID> = []
        steps.reserveCapacity(journal.steps.count)
        // One array for every subscription's step (shared, not one allocation each).
        let afterAuthentication: [RecoveryStepID] = [.authenticated]
        for id in journal.steps {
            if let channel = channelName(of: id) {
                steps.append(ReplayPlan.Step(id: id, prerequisites: afterAuthentication))
                // Read in place (`channels[channel]?.…`, and the values' getter by index, copied
                // the whole state out).
                if let index = channels.index(forKey: channel), channels.values[index].update({ $0.hasBeenActive }) {} else { firstRuns.insert(id) }
            } else if let step = journal.custom[id] {
                steps.append(ReplayPlan.Step(id: id, prerequisites: step.prerequisites))
                if !step.hasRun { firstRuns.insert(id) }
            }
        }
        var plan = ReplayPlan(steps: steps, mode: settings.replayMode, attemptLimit: settings.replayAttempts)
        let actions = plan.start()
        var replay = SocketReplay(plan: plan)
        // Room for every channel's catch-up and count at once.
        replay.targets.reserveCapacity(steps.count)
        link.connection?.replay = replay
        link.connection?.channels.reserveCapacity(steps.count)
        link.connection?.subscribeDeadlines.reserveCapacity(steps.count)
        recovery?.firstRuns = firstRuns
        recovery?.caughtUp.reserveCapacity(steps.count)
        performReplay(actions)
        // The outbox follows the resubscribes in the same flight when nothing else is ahead of it.
        flushOutboxIfReady()
    }

    /// Feeds the replay an event and carries out what it says.
    func replayEvent(_ event: (inout ReplayPlan) -> [ReplayPlan.Action]) {
        // Changed in place in the socket's value (a class): the plan is not copied per event.
        guard let actions = link.connection?.replay?.feed(event) else { return }
        performReplay(actions)
    }

    func isReplaying(_ id: RecoveryStepID) -> Bool {
        if case .running? = link.connection?.replay?.plan.state(of: id) { true } else { false }
    }

    private func performReplay(_ actions: [ReplayPlan.Action]) {
        // The subscribes in a row go to the protocol together, with one deadline.
        var subscribes: [(id: RecoveryStepID, channel: String)] = []
        for action in actions {
            if case .perform(let id, _) = action, let channel = channelName(of: id) {
                subscribes.append((id, channel))
                continue
            }
            sendReplaySubscribes(&subscribes)
            switch action {
            case .perform(let id, let attempt):
                if case .authenticating(let connection) = link, connection.pipelining {
                    connection.heldCustomRuns.append((id, attempt))
                } else {
                    startCustomRun(id, attempt: attempt)
                }
            case .failed(let id, let reason):
                if let channel = channelName(of: id) {
                    dropChannel(channel, SessionError(.rejected, "the subscription to \(channel) failed for good: \(reason)"), keepInReplay: true)
                }
            case .finished:
                flushOutboxIfReady()
                checkRecoveryComplete()
            }
        }
        sendReplaySubscribes(&subscribes)
    }

    /// Sends the replay's `subscribes` (and empties the list); a step whose channel is gone, or
    /// that cannot be sent now, leaves the replay.
    private func sendReplaySubscribes(_ subscribes: inout [(id: RecoveryStepID, channel: String)]) {
        guard !subscribes.isEmpty else { return }
        let steps = subscribes
        subscribes = []
        let unsent = acceptsRequests ? sendSubscribes(steps, deadline: clock.deadline(after: settings.requestTimeout)) : steps.map(\.id)
        for id in unsent { replayEvent { $0.remove(id) } }
    }

    func channelName(of id: RecoveryStepID) -> String? { id.subscribedChannel }

    func startCustomRun(_ id: RecoveryStepID, attempt: Int) {
        guard case .open = link, let step = journal.custom[id] else {
            replayEvent { $0.failed(id, reason: "not connected") }
            return
        }
        cancelCustomRun(id)
        let serial = makeSerial()
        let cancel = OneShot()
        link.connection?.replay?.customRuns[id] = (serial, cancel)
        arm(SocketTimer.recoveryStep(id), after: settings.requestTimeout)
        let context = RecoveryStepContext(session: self, isReplay: step.hasRun, attempt: attempt)
        spawn(.customStep(id, serial: serial, perform: step.perform, context: context, cancel: cancel))
    }

    private func cancelCustomRun(_ id: RecoveryStepID) {
        cancelTimer(SocketTimer.recoveryStep(id))
        link.connection?.replay?.customRuns.removeValue(forKey: id)?.cancel.fire()
    }

    /// An app-defined step's run ended.
    func customStepFinished(_ id: RecoveryStepID, serial: UInt64, error: String?) {
        guard let connection = link.connection, connection.replay?.customRuns[id]?.serial == serial else { return }
        connection.replay?.customRuns[id] = nil
        cancelTimer(SocketTimer.recoveryStep(id))
        if let error {
            replayEvent { $0.failed(id, reason: error) }
        } else {
            journal.custom[id]?.hasRun = true
            replayEvent { $0.succeeded(id) }
        }
    }

    /// An app-defined step took longer than the request timeout.
    func customStepTimedOut(_ id: RecoveryStepID) {
        link.connection?.replay?.customRuns.removeValue(forKey: id)?.cancel.fire()
        replayEvent { $0.failed(id, reason: "timed out after \(settings.requestTimeout)") }
    }

    /// A subscribe was acknowledged: note how far the catch-up must go.
    func recoverySubscribeAcknowledged(_ channel: String, outcome: SubscribeOutcome, positionBefore before: StreamPosition?, refetch: Bool) {
        // Without a recovery, each of these does nothing.
        if let before, let latest = outcome.position, latest != before, latest.isAtOrPast(before) == true {
            link.connection?.replay?.targets[channel] = latest
        }
        if case .gap = outcome { recovery?.gaps.insert(channel) }
        if refetch { recovery?.refetch.insert(channel) }
        // Found by its channel: no step id built for it. In a run of answers, told with the run.
        if turn.answeredSteps != nil {
            turn.answeredSteps?.append(channel)
        } else {
            replayEvent { $0.succeeded(subscriptionOf: channel) }
        }
    }

    /// Fully recovered? Then report, and end the recovery.
    func checkRecoveryComplete() {
        guard let connection = link.connection, connection.replay?.isSettled == true, outbox.isEmpty else { return }
        // Never before the server accepted the credentials (a pipelined replay can settle first).
        guard case .open = link, let current = recovery, let plan = connection.replay?.plan else { return }
        let implicitReplay = next.isReplay
        var steps = [
            RecoveryReport.Step(id: .connected, outcome: .succeeded, attempts: current.connectionAttempts, isReplay: implicitReplay),
            RecoveryReport.Step(id: .authenticated, outcome: .succeeded, attempts: 1, isReplay: implicitReplay),
        ]
        let settled = plan.stepsWithStates
        steps.reserveCapacity(steps.count + settled.count)
        for (id, state) in settled {
            switch state {
            case .succeeded(let attempts):
                steps.append(.init(id: id, outcome: .succeeded, attempts: attempts, isReplay: !current.isFirstRun(id)))
            case .failed(let reason, let attempts):
                steps.append(.init(id: id, outcome: .failed(reason), attempts: attempts, isReplay: !current.isFirstRun(id)))
            default:
                break
            }
        }
        let report = RecoveryReport(
            trigger: current.trigger,
            duration: clock.elapsed(since: current.startedAt),
            steps: steps,
            caughtUp: current.caughtUp,
            gaps: current.gaps,
            outboxFlushed: current.flushed,
            refetch: current.refetch,
            reachedBack: current.reachedBack
        )
        recovery = nil
        connection.replay = nil
        next.isReplay = true
        reportBroadcaster.set(report, onlyIfChanged: false)
        completeRefresh(with: report)
    }
}

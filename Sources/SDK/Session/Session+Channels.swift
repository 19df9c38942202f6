extension Session {
    /// Subscribes to `channel`. Connected, it returns once the server acknowledged the
    /// subscription (and throws if the server rejects it); not connected (also while a
    /// connection's credentials await their answer), it returns at once and the subscription
    /// starts with the next connection — a refusal then ends the ``Subscription`` with the error. After every reconnect the session
    /// resubscribes by itself, asking for every message since the last one delivered. After
    /// ``shutdown()`` it throws ``SessionError/Code/sessionEnded``, and a subscription held
    /// then ends with that error.
    ///
    /// **Dropping the returned ``Subscription`` unsubscribes** (when it was the channel's last
    /// one): keep it while you want the messages. In a test that only asserts on the session,
    /// keep it in a variable until the end (`_ = room` as the last line, or
    /// `withExtendedLifetime(room) { … }`).
    public func subscribe(to channel: String) async throws -> Subscription {
        try await subscribe(to: Topic(channel))
    }

    /// Subscribes to `topic`: a channel by name, with what the server's protocol needs to know
    /// about it (a GraphQL subscription operation: ``Topic/graphQL(_:query:variables:)``). It
    /// behaves as ``subscribe(to:)-(String)`` does; every (re)subscribe sends the same options.
    /// Subscribing again to a name the app holds with other options throws `invalidArgument`.
    public func subscribe(to topic: Topic) async throws -> Subscription {
        try refuseIfEnded("subscribe(to:)")
        ensureStarted()
        let channel = topic.name
        guard !channel.isEmpty, channel.utf8.count <= 256 else {
            throw SessionError(.invalidArgument, "a channel name is 1 to 256 bytes (got \(channel.utf8.count))")
        }
        if let held = channels[channel], held.options != topic.options {
            throw SessionError(.invalidArgument, "\(channel) is already subscribed with other options; unsubscribe first")
        }
        let subscriber = makeSerial()
        let (stream, continuation) = AsyncThrowingStream<Subscriber.Batch, any Error>.makeStream()
        let sink = inputSink
        continuation.onTermination = { termination in
            if case .cancelled = termination { sink.yield(.subscriberEnded(channel: channel, subscriber: subscriber)) }
        }
        if channels[channel] == nil {
            appendToJournal(.subscription(channel))
            if let stored = storedPositions.removeValue(forKey: channel) {
                // Held by an earlier launch: resumed from where the app had finished, as after a
                // reconnect; what that launch was handed beyond it comes again, flagged. Without
                // a position (a protocol or channel that has none) it is a recovery all the same:
                // what the killed launch missed is unknown, and the report names it for refetch.
                let resume = stored.finished ?? stored.handed
                var state = ChannelState(options: topic.options, position: resume, hasBeenActive: true)
                state.finished = resume
                state.resumedFromStoredAt = stored.at
                if stored.handed != resume { state.redeliverUntil = stored.handed }
                channels[channel] = state
            }
        }
        let backlog = Locked(Subscriber.Backlog())
        let handedOver = channels[channel]?.handedOver ?? 0
        channels[channel, default: ChannelState(options: topic.options)].subscribers[subscriber] = Subscriber(continuation: continuation, backlog: backlog, startIndex: handedOver)
        mirrorChannel(channel)
        // What the app finished matters only to a store and to a protocol that acknowledges
        // on "finished" (MQTT QoS 1): without either, a finished batch wakes no one.
        var batchFinished: (@Sendable () -> Void)?
        if settings.store != nil || settings.wireProtocol.capabilities.acknowledgesWhenFinished {
            batchFinished = { sink.yield(.batchFinished(channel: channel)) }
        }
        let subscription = Subscription(
            channel: channel, batches: stream, backlog: backlog, batchFinished: batchFinished,
            drained: { sink.yield(.subscriberDrained(channel: channel, subscriber: subscriber)) }
        )
        guard acceptsRequests, let connection = link.connection, !connection.channels.isActive(channel) else { return subscription }
        if case .authenticating = link {
            // Not connected yet (the credentials are unanswered): it goes out behind them, and
            // the call returns at once; should this attempt fail, the next one's replay has it.
            if connection.channels.pendingRequest(of: channel) == nil { sendSubscribe(channel, behindCredentials: true) }
            return subscription
        }
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
            // Waiting before sending: a protocol may answer at once (graphql-transport-ws has
            // no subscribe acknowledgement).
            channels[channel]?.waiters.append((subscriber, waiter))
            if connection.channels.pendingRequest(of: channel) == nil { sendSubscribe(channel) }
        }
        return subscription
    }

    /// Ends every subscription to `channel` and tells the server.
    public func unsubscribe(from channel: String) {
        defer { mirrorChannel(channel) }
        guard !hasEnded else { return }
        ensureStarted()
        flushDeliveries()
        guard let state = channels.removeValue(forKey: channel) else { return }
        forgetInJournal(channel)
        for subscriber in state.subscribers.values { subscriber.continuation.finish() }
        for waiter in state.waiters { waiter.continuation.resume(throwing: SessionError(.disconnected, "unsubscribed from \(channel)")) }
        leaveOnServer(channel)
    }

    // MARK: Internals

    /// The protocol made the subscription (`outcome`: from where, and what it covers).
    func subscribed(_ subscription: SubscriptionID, _ outcome: SubscribeOutcome) {
        guard let connection = link.connection, let channel = connection.channels.answered(subscription) else { return }
        // The mirror shows the position every turn before left it at (each change of a
        // position is mirrored: here, on subscribing, and by each turn's deliveries): a
        // resubscribe that leaves the position as it was needs no update.
        var mirrored = false
        defer { if !mirrored { mirrorChannel(channel) } }
        apply(connection.subscribeDeadlines.remove(subscription), to: .subscribes)
        let resumes = settings.wireProtocol.capabilities.resumesSubscriptions
        // In place: the channel's state is not copied.
        let updated = channels[channel]?.update { state in
            let before = state.position
            // A resubscribe on a protocol that cannot resume, or of a channel with no position to
            // resume from (answered live): what was missed is unknown.
            let resumedLive = if case .live = outcome { state.hasBeenActive && state.position == nil } else { false }
            let refetch = outcome == .resumeUnsupported || resumedLive || (state.hasBeenActive && !resumes)
            state.hasBeenActive = true
            let storedAt = state.resumedFromStoredAt
            state.resumedFromStoredAt = nil
            if let latest = outcome.position, state.position.map({ latest.isAtOrPast($0) == false }) ?? true {
                // A new subscription starts at the server's latest; and a server whose latest is
                // before what we already saw has lost its history (a restart): start over from its
                // positions, or the next resume would ask for what it never had.
                state.position = latest
            }
            // Nothing handed over is unfinished: the app has finished up to where the stream stands.
            if state.unfinished.isEmpty { state.finished = state.position }
            let waiters = state.waiters
            if !waiters.isEmpty { state.waiters = [] }
            return (
                before: before, unmoved: before == state.position, refetch: refetch, storedAt: storedAt, finished: state.finished, waiters: waiters,
                flowControlled: state.flowControlled
            )
        }
        // Taken apart once: each use of the tuple whole copied it (through the runtime, member by
        // member), three times per subscription of a recovery.
        guard case let (before, unmoved, refetch, storedAt, finished, waiters, flowControlled)? = updated else { return }
        mirrored = unmoved
        connection.channels.confirm(subscription, for: channel)
        if let storedAt {
            recovery?.reachedBack[channel] = .milliseconds(max(0, Self.wallClockMilliseconds() - storedAt))
        }
        // With a store, `subscribe` returns once it holds where the subscription began: a kill
        // right after must not leave a relaunch subscribing from a later "now". The protocol's
        // state goes with it (MQTT: the filters the broker's session now holds).
        storeChannel(channel)
        if storeLink != nil { storeWireState() }
        // The socket's protocol learns how far the app got (MQTT acknowledges a re-send of what
        // an earlier socket delivered once the app has finished it).
        acknowledgeFinished(channel, through: finished)
        let covering = storeLink.map { $0.covering } ?? 0
        for waiter in waiters { tellOnceStored(covering, .subscribed(waiter.continuation)) }
        recoverySubscribeAcknowledged(channel, outcome: outcome, positionBefore: before, refetch: refetch)
        if flowControlled { catchUpSubscribed(channel, outcome) }
    }

    /// Subscribe answers in a row, from `index` on (a resumed set's members come as one list):
    /// each made, then the replay told of them all in one event (one event each walked the
    /// replay's actions a thousand times). `index` moves past them.
    func subscribedInARow(_ actions: [WireAction], from index: inout Int) {
        // A run carried out inside this one (a catch-up's subscribe answered at once) tells its own.
        let outer = turn.answeredSteps
        turn.answeredSteps = []
        while index < actions.endIndex, case .subscribed(let subscription, let outcome) = actions[index] {
            index += 1
            subscribed(subscription, outcome)
        }
        let answered = turn.answeredSteps ?? []
        turn.answeredSteps = outer
        guard !answered.isEmpty else { return }
        replayEvent { plan in
            var actions: [ReplayPlan.Action] = []
            for channel in answered { actions += plan.succeeded(subscriptionOf: channel) }
            return actions
        }
    }

    /// The server refused (or did not answer) a subscribe: every subscriber of the channel
    /// learns why, and the session lets the channel go.
    func subscribeRejected(_ id: RequestID, _ error: SessionError) -> Bool {
        guard let connection = link.connection, let channel = connection.channels.answered(id) else { return false }
        apply(connection.subscribeDeadlines.remove(id), to: .subscribes)
        if isReplaying(.subscription(channel)) {
            // A replayed step: the replay retries it, or gives up on it, step by step.
            replayEvent { $0.failed(.subscription(channel), reason: error.message) }
            return true
        }
        dropChannel(channel, error)
        return true
    }

    /// Lets `channel` go: its subscribers and waiters learn why. A step the replay gave up on
    /// stays in the replay (its report shows the failure).
    func dropChannel(_ channel: String, _ error: SessionError, keepInReplay: Bool = false) {
        defer { mirrorChannel(channel) }
        flushDeliveries()
        guard let state = channels.removeValue(forKey: channel) else { return }
        forgetInJournal(channel, keepInReplay: keepInReplay)
        for subscriber in state.subscribers.values { subscriber.continuation.finish(throwing: error) }
        for waiter in state.waiters { waiter.continuation.resume(throwing: error) }
    }

    /// The channel is no longer held: no replay, no catch-up.
    private func forgetInJournal(_ channel: String, keepInReplay: Bool = false) {
        let id = RecoveryStepID.subscription(channel)
        removeFromJournal { $0 == id }
        storeChannel(channel)
        if link.connection?.replay?.targets.removeValue(forKey: channel) != nil { checkRecoveryComplete() }
        if !keepInReplay { replayEvent { $0.remove(id) } }
    }

    /// The subscribe timer of the socket fired: every subscribe whose deadline passed fails
    /// (oldest first), as a refusal would.
    func subscribeTimeoutsFired() {
        guard let connection = link.connection else { return }
        let clock = clock
        let (expired, change) = connection.subscribeDeadlines.expire { clock.remaining(until: $0) }
        apply(change, to: .subscribes)
        for entry in expired {
            // Given up on, it is ended on the server too: made after all, it would deliver to no
            // one (and on MQTT hold back the acknowledgement of everything after it).
            perform(.unsubscribe(entry.id))
            _ = subscribeRejected(entry.id, SessionError(.timedOut, "no reply within \(entry.timeout)"))
        }
    }

    /// The connection was lost while `subscribe(to:)` calls waited: they throw, and hold nothing.
    func failAllSubscribeWaiters(_ error: SessionError) {
        defer { mirrorChannels() }
        flushDeliveries()
        // The channels with waiters, read in place: walking `channels.keys` while changing the
        // table copied it whole, and `channels[channel]?.waiters` copied each state out.
        var waiting: [String] = []
        var index = channels.startIndex
        while index != channels.endIndex {
            if !channels.values[index].update({ $0.waiters.isEmpty }) { waiting.append(channels.keys[index]) }
            channels.formIndex(after: &index)
        }
        for channel in waiting {
            guard let waiters = channels[channel]?.update({ state in
                defer { state.waiters = [] }
                return state.waiters
            }) else { continue }
            for waiter in waiters {
                channels[channel]?.subscribers.removeValue(forKey: waiter.subscriber)?.continuation.finish(throwing: error)
                waiter.continuation.resume(throwing: error)
            }
            if channels[channel]?.subscribers.isEmpty == true {
                channels[channel] = nil
                forgetInJournal(channel)
            }
        }
    }

    func removeSubscriber(_ subscriber: UInt64, from channel: String) {
        defer { mirrorChannel(channel) }
        guard var state = channels[channel], state.subscribers.removeValue(forKey: subscriber) != nil else { return }
        if state.subscribers.isEmpty {
            channels[channel] = nil
            forgetInJournal(channel)
            leaveOnServer(channel)
        } else {
            channels[channel] = state
        }
    }

    /// Leaves `channel` on this socket: its subscribe in flight forgotten (and its timeout), and
    /// the subscription that stands for it, pending or confirmed, ended on the server.
    func leaveOnServer(_ channel: String) {
        guard let connection = link.connection else { return }
        let (pending, subscription) = connection.channels.forget(channel)
        if let pending { apply(connection.subscribeDeadlines.remove(pending), to: .subscribes) }
        guard acceptsRequests, let subscription else { return }
        // The answer is not awaited.
        perform(.unsubscribe(subscription))
    }

    func finishAllSubscribers(throwing error: SessionError) {
        defer { mirrorChannels() }
        flushDeliveries()
        for state in channels.values {
            for subscriber in state.subscribers.values { subscriber.continuation.finish(throwing: error) }
            for waiter in state.waiters { waiter.continuation.resume(throwing: error) }
        }
        channels = [:]
        _ = link.connection?.channels.forgetPending()
        removeFromJournal { $0.subscribedChannel != nil }
    }
}

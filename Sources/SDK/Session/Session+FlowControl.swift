extension Session {
    /// Subscribers `ids` of `name` are at their bound (<doc:FlowControl>). Where the
    /// protocol can send a channel's messages again, each is held back — handed nothing until it
    /// has read half of what it holds, then caught up from the last message it got; a channel
    /// whose every subscriber is held back is left on the server meanwhile. Elsewhere each ends
    /// with `subscriberFellBehind`, after what it holds.
    func holdBack(_ ids: [UInt64], on name: String) {
        guard settings.wireProtocol.capabilities.catchesUpSubscribers else {
            for id in ids {
                guard let subscriber = channels[name]?.subscribers[id] else { continue }
                let error = subscriber.fellBehind(on: name, "it holds \(settings.subscriberBufferLimit) messages or \(settings.subscriberBufferBytes) bytes unread, and this server's protocol cannot send the channel's messages again")
                settings.logger.log(.warning, error.message)
                subscriber.continuation.finish(throwing: error)
                removeSubscriber(id, from: name)
            }
            return
        }
        for id in ids {
            guard let subscriber = channels[name]?.subscribers[id] else { continue }
            channels[name]?.subscribers[id]?.flow = .heldBack(taken: subscriber.takenCount)
            settings.logger.log(.notice, "the subscriber of \(name) is at its bound: held back until it has read half, then caught up from \(subscriber.lastPosition.map { "\($0)" } ?? "its start")")
        }
        channels[name]?.flowControlled = true
        leaveIfAllHeldBack(name)
        if runtime.timers[.subscriberStall] == nil { arm(.subscriberStall, after: settings.subscriberStallTimeout) }
    }

    /// Hands `batch` over on a channel where a subscriber is held back or catching up: what is
    /// new (past ``ChannelState/handedThrough``) is counted and goes to every subscriber not held
    /// back; what comes again (a catch-up's) goes only to those that have not had it.
    func handOverControlled(_ batch: [ChannelMessage], on name: String) {
        guard let state = channels[name] else { return }
        let through = state.handedThrough
        let fresh = through.map { through in batch.filter { message in message.position.map { through.isAtOrPast($0) != true } ?? true } } ?? batch
        counted(fresh, on: name, from: state.handedOver)
        let newest = channels[name]?.handedThrough
        var refused: [UInt64] = []
        for (id, subscriber) in state.subscribers {
            let due: [ChannelMessage]
            switch subscriber.flow {
            case .heldBack: continue
            case .flowing: due = fresh
            case .catchingUp:
                let last = subscriber.lastPosition
                due = last.map { last in batch.filter { message in message.position.map { last.isAtOrPast($0) != true } ?? false } } ?? batch
            }
            if !due.isEmpty,
                !subscriber.offer(due, bytes: due.approximateByteCount, limit: settings.subscriberBufferLimit, byteLimit: settings.subscriberBufferBytes)
            {
                refused.append(id)
                continue
            }
            // Caught up: it has what the channel has.
            if subscriber.flow == .catchingUp, let newest, let last = subscriber.lastPosition, last.isAtOrPast(newest) == true {
                settings.logger.log(.debug, "\(name): a subscriber caught up (at \(last))")
                channels[name]?.subscribers[id]?.flow = .flowing
            }
        }
        if !refused.isEmpty { holdBack(refused, on: name) }
        settleFlow(name)
    }

    /// A subscriber held back read down to half: it is caught up from the last message it got.
    func subscriberDrained(_ id: UInt64, on name: String) {
        guard case .heldBack = channels[name]?.subscribers[id]?.flow else {
            settings.logger.log(.debug, "a subscriber of \(name) read down, but is not held back (\(String(describing: channels[name]?.subscribers[id]?.flow)))")
            return
        }
        channels[name]?.subscribers[id]?.flow = .catchingUp
        catchUp(name)
    }

    /// Subscribes `name` again from ``resumePosition(of:)``: the server sends what the
    /// subscribers catching up have not had. Not connected, the next socket's replay does.
    func catchUp(_ name: String) {
        guard acceptsRequests, let connection = link.connection else { return }
        if connection.channels.pendingRequest(of: name) != nil {
            // Asked from an earlier position, or before this subscriber was due: once answered.
            channels[name]?.catchUpAgain = true
            settings.logger.log(.debug, "\(name): a subscriber read down while a subscribe is on the way: caught up once it is answered")
            return
        }
        leaveOnServer(name)
        settings.logger.log(.debug, "\(name): subscribing again from \(channels[name].flatMap(resumePosition(of:)).map { "\($0)" } ?? "now") to catch up a subscriber")
        sendSubscribe(name)
    }

    /// A subscribe of a flow-controlled channel was answered: a catch-up past what the server
    /// still holds (a gap) ends the subscribers that needed it; one asked for meanwhile goes.
    func catchUpSubscribed(_ name: String, _ outcome: SubscribeOutcome) {
        guard let state = channels[name] else { return }
        settings.logger.log(.debug, "\(name): subscribed while a subscriber is held back or catching up (\(outcome))")
        if case .gap = outcome {
            for (id, subscriber) in state.subscribers where subscriber.flow == .catchingUp {
                let error = subscriber.fellBehind(on: name, "the server no longer holds the messages after the last one it got (its retention)")
                settings.logger.log(.warning, error.message)
                subscriber.continuation.finish(throwing: error)
                removeSubscriber(id, from: name)
            }
        }
        if channels[name]?.catchUpAgain == true {
            channels[name]?.catchUpAgain = false
            catchUp(name)
        }
        settleFlow(name)
    }

    /// Where a (re)subscribe of `state`'s channel resumes: from the last message the subscriber
    /// furthest behind among those catching up got, or where the channel stands.
    func resumePosition(of state: ChannelState) -> StreamPosition? {
        guard state.flowControlled else { return state.position }
        var resume = state.position
        for subscriber in state.subscribers.values where subscriber.flow == .catchingUp {
            guard let last = subscriber.lastPosition else { return nil }
            if let current = resume, current.isAtOrPast(last) == true { resume = last }
        }
        return resume
    }

    /// The stall check: a subscriber held back that took nothing since the last check stopped
    /// reading, and ends with `subscriberTooSlow`.
    func subscriberStallCheck() {
        var stillHeldBack = false
        for (name, state) in channels where state.flowControlled {
            for (id, subscriber) in state.subscribers {
                guard case .heldBack(let mark) = subscriber.flow else { continue }
                let taken = subscriber.takenCount
                guard taken == mark else {
                    channels[name]?.subscribers[id]?.flow = .heldBack(taken: taken)
                    stillHeldBack = true
                    continue
                }
                let error = subscriber.stopped(on: name, stall: settings.subscriberStallTimeout)
                settings.logger.log(.warning, error.message)
                subscriber.continuation.finish(throwing: error)
                removeSubscriber(id, from: name)
            }
            settleFlow(name)
        }
        if stillHeldBack { arm(.subscriberStall, after: settings.subscriberStallTimeout) }
    }

    /// Back to the plain path once every subscriber of `name` flows; left on the server while
    /// every one is held back.
    private func settleFlow(_ name: String) {
        guard let state = channels[name], state.flowControlled else { return }
        if state.subscribers.values.allSatisfy({ $0.flow == .flowing }) {
            channels[name]?.flowControlled = false
            channels[name]?.catchUpAgain = false
            return
        }
        leaveIfAllHeldBack(name)
    }

    /// A channel whose every subscriber is held back is left on the server (it would send what
    /// no one takes); its catch-up subscribes again.
    private func leaveIfAllHeldBack(_ name: String) {
        guard let state = channels[name], !state.subscribers.isEmpty, link.connection?.channels.isJoinedOrJoining(name) == true,
            state.subscribers.values.allSatisfy({ if case .heldBack = $0.flow { true } else { false } })
        else { return }
        leaveOnServer(name)
        if link.connection?.replay?.targets.removeValue(forKey: name) != nil { checkRecoveryComplete() }
    }
}

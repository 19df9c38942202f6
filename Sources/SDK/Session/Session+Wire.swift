import ConnectionPolicy

extension Session {
    /// Runs `body` on the current connection's protocol machine, held only by it meanwhile: a
    /// copy left in the connection would make every mutation copy the machine's tables (a
    /// replay of a thousand subscriptions would copy them a thousand times).
    func withMachine(_ body: (inout any WireMachine) -> [WireAction]) -> [WireAction]? {
        guard let connection = link.connection, var machine = connection.machine else { return nil }
        connection.machine = nil
        let actions = body(&machine)
        connection.machine = machine
        return actions
    }

    /// Hands a command to the current connection's protocol machine and carries out what it
    /// answers.
    func perform(_ command: WireCommand) {
        guard let actions = withMachine({ $0.perform(command) }) else { return }
        carry(actions)
    }

    /// Hands `commands` to the current connection's protocol machine in one call, and carries
    /// out what it answers as one list (a replay's thousand subscribes took the machine out of
    /// its socket, and carried its answer, once each).
    func perform(contentsOf commands: [WireCommand]) {
        guard !commands.isEmpty else { return }
        let actions = withMachine { machine in
            var actions: [WireAction] = []
            for command in commands { actions += machine.perform(command) }
            return actions
        }
        if let actions { carry(actions) }
    }

    /// Queues the protocol's goodbye (its frames only: the connection is being let go).
    func sayGoodbye() {
        guard let actions = withMachine({ $0.perform(.goodbye) }), let connection = link.connection else { return }
        for case .send(let frame) in actions { connection.pendingFrames.append(frame) }
    }

    /// A frame arrived on the current connection.
    func received(_ frame: TransportFrame) {
        if runtime.control.liveness.skipsHeartbeatWhenAlive { link.connection?.lastInbound = clock.now }
        guard let actions = withMachine({ $0.receive(frame) }) else { return }
        carry(actions)
    }

    /// Frames of one read arrived on the connection of `attempt`. Their actions are carried
    /// out in order, until one of them ends that connection.
    func received(_ frames: [TransportFrame], attempt: UInt64) {
        guard let connection = connection(of: attempt) else { return }
        if runtime.control.liveness.skipsHeartbeatWhenAlive { connection.lastInbound = clock.now }
        guard let actions = withMachine({ $0.receive(contentsOf: frames) }) else { return }
        inOneTurn { carryActions(actions, attempt: attempt) }
    }

    /// A protocol timer fired.
    func wireTimerFired(_ name: String) {
        guard let actions = withMachine({ $0.timerFired(WireTimer(name)) }) else { return }
        carry(actions)
    }

    /// Runs `body` as one turn: the frames it makes go to the writer together when it ends,
    /// and the messages it delivers go to each subscriber together.
    func inOneTurn(_ body: () -> Void) {
        turn.depth += 1
        defer {
            turn.depth -= 1
            if turn.depth == 0 {
                flushDeliveries()
                flushFrames()
            }
        }
        body()
    }

    /// Carries out a machine's actions, in order. The machine knows the protocol; the session
    /// knows requests, subscriptions, recovery and the policy.

    func carry(_ actions: [WireAction]) {
        // Frames wait until the outermost turn ends, and go to the writer together: a
        // replay's resubscribes and the outbox behind them leave in one write.
        inOneTurn { carryActions(actions) }
    }

    private func carryActions(_ actions: [WireAction], attempt: UInt64? = nil) {
        var index = actions.startIndex
        while index < actions.endIndex {
            // Actions of a later frame are not carried out once the connection they came on is
            // gone (a frame by frame `received` would not have handed that frame over).
            if let attempt, connection(of: attempt) == nil { return }
            let action = actions[index]
            index += 1
            switch action {
            case .send(let frame):
                link.connection?.pendingFrames.append(frame)
            case .ready:
                authenticated()
            case .pipelining:
                pipelineReplay()
            case .credentialsNeeded:
                fetchCredentialsForOpenConnection()
            case .subscribed:
                // The answers in a row (a resumed set's members) tell the replay in one event.
                index -= 1
                subscribedInARow(actions, from: &index)
            case .subscriptionFailed(let subscription, let failure):
                let error = Self.rejection(failure, request: subscription)
                let channel = link.connection?.channels.unconfirm(subscription)
                // A protocol without a subscribe acknowledgement (graphql-transport-ws) reports
                // a refusal after the subscription counted as made: it ends then.
                if !subscribeRejected(subscription, error), let channel { dropChannel(channel, error) }
            case .subscriptionEnded(let subscription, let reason):
                guard let channel = link.connection?.channels.unconfirm(subscription) else { continue }
                dropChannel(channel, SessionError(.disconnected, "the server ended the subscription to \(channel): \(reason)"))
            case .delivery(let subscription, _, _):
                // A protocol that numbers nothing delivers what the server sent, as it came.
                guard let channel = link.connection?.channels.channel(of: subscription) else { continue }
                // The deliveries for the same subscription right after it go with it, in one step.
                index -= 1
                deliver(actions.deliveryRun(of: subscription, on: channel, from: &index), to: channel)
            case .deliveries(let subscription, let messages, let bytes):
                // A run as the codec built it: handed on as it is, its channel looked up once,
                // its size its frames'.
                guard let channel = link.connection?.channels.channel(of: subscription) else { continue }
                deliver(messages, to: channel, bytes: bytes)
            case .redelivery(let subscription, let data, let position):
                guard let channel = link.connection?.channels.channel(of: subscription) else { continue }
                var message = ChannelMessage(channel: channel, position: position, data: data)
                message.isRedelivery = true
                deliver([message], to: channel)
            case .replied(let request, .success(.acknowledged(let position, let payload))):
                _ = resolveRequest(request, with: .success(PublishReceipt(.acknowledged, position: position, response: payload)))
            case .replied(let request, .success(.sentUnconfirmed)):
                _ = resolveRequest(request, with: .success(PublishReceipt(.sentUnconfirmed)))
            case .replied(let request, .failure(let failure)):
                _ = resolveRequest(request, with: .failure(Self.rejection(failure, request: request)))
            case .arm(let timer, let delay):
                arm(SocketTimer.wire(timer.name), after: delay)
            case .cancel(let timer):
                cancelTimer(SocketTimer.wire(timer.name))
            case .end(let ending):
                flushFrames()
                connectionEnded(reason: ending.reason, disposition: ending.disposition, closeCode: ending.closeCode)
                return
            }
        }
    }

    /// Hands the frames carried so far to the writer, as one batch.
    func flushFrames() {
        guard let connection = link.connection else { return }
        if runtime.control.liveness.skipsHeartbeatWhenAlive, !connection.pendingFrames.isEmpty { connection.lastOutbound = clock.now }
        connection.flushFrames()
    }

    private static func rejection(_ failure: WireFailure, request: RequestID) -> SessionError {
        let error = ServerError(id: request, code: failure.code, message: failure.message)
        return SessionError(.rejected, error.description, serverError: error)
    }
}


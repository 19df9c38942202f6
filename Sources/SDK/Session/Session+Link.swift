import ConnectionPolicy

extension Session {
    /// Feeds the policy one event, logs what it decided and why, and carries it out.
    func decide(_ event: @autoclosure () -> String, _ body: (inout any SessionPolicy) -> [PolicyAction]) {
        let actions = body(&policy)
        logDecision(event(), actions)
        apply(actions)
    }

    func logDecision(_ event: @autoclosure () -> String, _ actions: [PolicyAction]) {
        let level: LogLevel = actions.isEmpty ? .debug : .info
        settings.logger.log(level, "policy \(policy.name): \(event()) → \(actions.isEmpty ? "nothing" : actions.map(\.description).joined(separator: ", "))")
    }

    /// Carries out the policy's actions in order.
    func apply(_ actions: [PolicyAction]) {
        for action in actions {
            switch action {
            case .openConnection:
                openConnection()
            case .closeConnection(let reason):
                let error = SessionError(.disconnected, "disconnected: \(reason)", reason: reason)
                if refreshOwnsLink {
                    // The policy never had this connection; it only reports its reason.
                    refresh?.ownsLink = false
                }
                teardownLink(code: .normal, reason: "closed by client")
                failAllRequests(error)
                abandonRecovery()
                failRefresh(error)
                setStatus(.disconnected(reason))
            case .armTimer(let timer, let delay):
                arm(.policy(timer.id), after: delay, policyTimer: timer)
            case .cancelTimer(let timer):
                if timers[.policy(timer.id)]?.policyTimer == timer { cancelTimer(.policy(timer.id)) }
            }
        }
    }

    var currentAttemptID: UInt64? {
        switch link {
        case .idle: nil
        case .opening(let attempt), .authenticating(let attempt, _), .open(let attempt, _, _): attempt.id
        }
    }

    private func openConnection() {
        guard case .idle = link else {
            // Never two sockets. A connection a background refresh opened becomes the policy's.
            policyTakesOverRefreshLink()
            return
        }
        startAttempt()
    }

    /// Starts an attempt to connect (for the policy, or for a background refresh).
    func startAttempt() {
        guard case .idle = link else { return }
        recoveryAttemptStarted()
        nextAttemptID += 1
        let attempt = Attempt(id: nextAttemptID, cancel: OneShot(), settled: OneShot())
        spawn(.open(attempt: attempt.id, cancel: attempt.cancel, settled: attempt.settled, after: lastAttemptSettled))
        lastAttemptSettled = attempt.settled
        link = .opening(attempt)
        arm(.connectTimeout, after: settings.connectTimeout)
        setStatus(.connecting)
    }

    /// Lets go of the socket (or the attempt), whatever its state; reports nothing.
    func teardownLink(code: CloseCode, reason: String) {
        switch link {
        case .idle:
            return
        case .opening(let attempt):
            attempt.cancel.fire()
        case .authenticating(let attempt, let wire), .open(let attempt, let wire, _):
            attempt.cancel.fire()
            wire.outbound.yield(.close(code, reason: reason))
            wire.outbound.finish()
        }
        link = .idle
        machine = nil
        wireSubscriptions = [:]
        for key in timers.keys { if case .wire = key { cancelTimer(key) } }
        cancelTimer(.connectTimeout)
        cancelTimer(.heartbeat)
        markChannelsUnsubscribed()
        recovery?.connectionLost()
    }

    func connectionOpened(attempt: UInt64, connection: any TransportConnection, token: Secret?, handshake: Handshake, settled: OneShot) {
        let (outbound, continuation) = AsyncStream<Outbound>.makeStream()
        guard case .opening(let current) = link, current.id == attempt else {
            // A socket for an attempt given up on: close it. The writer fires its `settled`.
            continuation.yield(.close(.normal, reason: "connect cancelled"))
            continuation.finish()
            spawn(.write(attempt: attempt, connection: connection, frames: outbound, settled: settled))
            return
        }
        let wire = Wire(connection: connection, outbound: continuation)
        spawn(.write(attempt: attempt, connection: connection, frames: outbound, settled: current.settled))
        spawn(.read(attempt: attempt, connection: connection, cancel: current.cancel))
        settings.logger.log(.debug, "attempt \(attempt): socket open, authenticating")
        link = .authenticating(current, wire)
        if !handshake.subprotocols.isEmpty, !handshake.subprotocols.contains(connection.subprotocol ?? "") {
            // The server does not speak the protocol the settings name: retrying cannot help.
            let chosen = connection.subprotocol.map { "'\($0)'" } ?? "none"
            let detail = "the server chose WebSocket subprotocol \(chosen), not \(handshake.subprotocols.joined(separator: " or "))"
            connectionEnded(reason: .error(detail), disposition: .doNotRetry, closeCode: .protocolError)
            return
        }
        var fresh = settings.wireProtocol.makeConnectionMachine()
        let actions = fresh.start(credentials: token)
        machine = fresh
        carry(actions)
    }

    func openFailed(attempt: UInt64, error: any Error) {
        guard case .opening(let current) = link, current.id == attempt else { return }
        link = .idle
        cancelTimer(.connectTimeout)
        let detail = (error as? TransportError)?.description ?? String(describing: error)
        settings.logger.log(.info, "connect attempt failed: \(detail)")
        if let status = (error as? TransportError)?.httpStatus {
            // What a refused upgrade means is the protocol's to say (401/403: the credentials).
            let ending = settings.wireProtocol.ending(httpStatus: status)
            lost(ConnectionLoss(reason: ending.reason, disposition: ending.disposition, uptime: nil))
            return
        }
        lost(ConnectionLoss(reason: .error(detail), disposition: .retry, uptime: nil))
    }

    func transportEvent(attempt: UInt64, event: TransportEvent) {
        guard currentAttemptID == attempt else { return }
        switch event {
        case .frame(let frame):
            received(frame)
        case .closed(let code, let reason):
            // What a close means is the protocol's to say.
            let ending = settings.wireProtocol.ending(code: code, reason: reason)
            connectionEnded(reason: ending.reason, disposition: ending.disposition)
        }
    }

    /// The socket of the current attempt is gone (closed by the server, reset, timed out,
    /// failed): release it and let the policy decide.
    func connectionEnded(reason: DisconnectReason, disposition: RetryDisposition, closeCode: CloseCode = .normal) {
        var uptime: Duration?
        if case .open(_, _, let since) = link { uptime = clock.elapsed(since: since) }
        settings.logger.log(.info, "connection ended: \(reason) (\(disposition))")
        teardownLink(code: closeCode, reason: "connection ended")
        failAllRequests(SessionError(.connectionLost, "the connection was lost: \(reason)", reason: reason))
        if refreshOwnsLink {
            // The policy never had this connection: the refresh ends, the policy hears nothing.
            failRefresh(SessionError(.connectionLost, "the background refresh lost its connection: \(reason)", reason: reason))
            return
        }
        lost(ConnectionLoss(reason: reason, disposition: disposition, uptime: uptime))
    }

    private func lost(_ loss: ConnectionLoss) {
        let actions = policy.connectionLost(loss)
        logDecision("connection lost (\(loss))", actions)
        // `reconnecting` only when the policy will try again; a final loss goes straight to
        // `disconnected` through its close action.
        let isFinal = actions.contains { if case .closeConnection = $0 { true } else { false } }
        if !isFinal { setStatus(.reconnecting(loss.reason)) }
        apply(actions)
    }

    /// The server accepted the credentials.
    func authenticated() {
        guard case .authenticating(let attempt, let wire) = link else { return }
        link = .open(attempt, wire, since: clock.now)
        cancelTimer(.connectTimeout)
        setStatus(.connected)
        startReplay()
        armHeartbeat()
        if !refreshOwnsLink { decide("connection opened") { $0.connectionOpened() } }
    }

    // MARK: Timers

    func arm(_ key: TimerKey, after delay: Duration, policyTimer: PolicyTimer? = nil) {
        cancelTimer(key)
        let timer = ArmedTimer(serial: makeSerial(), cancel: OneShot(), policyTimer: policyTimer)
        timers[key] = timer
        spawn(.timer(key, serial: timer.serial, deadline: clock.deadline(after: delay), cancel: timer.cancel))
    }

    func cancelTimer(_ key: TimerKey) {
        timers.removeValue(forKey: key)?.cancel.fire()
    }

    func timerFired(_ key: TimerKey, serial: UInt64) {
        guard let timer = timers[key], timer.serial == serial else { return }
        timers[key] = nil
        switch key {
        case .policy:
            if let policyTimer = timer.policyTimer { decide("timer \(policyTimer) fired") { $0.timerFired(policyTimer) } }
        case .connectTimeout:
            switch link {
            case .opening, .authenticating:
                connectionEnded(reason: .error("connecting took longer than \(settings.connectTimeout)"), disposition: .retry)
            case .idle, .open:
                break
            }
        case .request(let id):
            failRequest(id, SessionError(.timedOut, "no reply within \(settings.requestTimeout)"))
        case .recoveryStep(let id):
            customStepTimedOut(id)
        case .outboxDeadline:
            armOutboxDeadline()
        case .refreshDeadline:
            failRefresh(SessionError(.timedOut, "the background refresh did not finish within its deadline"))
        case .heartbeat:
            sendHeartbeat()
        case .wire(let name):
            wireTimerFired(name)
        }
    }
}

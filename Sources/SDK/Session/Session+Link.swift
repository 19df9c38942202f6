import ConnectionPolicy

extension Session {
    /// Lets `attempt`'s socket go, if it is the current one (the control's teardown).
    func tearDown(_ attempt: UInt64, cause: TeardownCause) {
        guard currentAttemptID == attempt else { return }
        switch cause {
        case .policyClosed: teardownLink(code: .normal, reason: "closed by client")
        case .policyReplaced: teardownLink(code: .normal, reason: "policy replaced")
        case .returned: teardownLink(code: .normal, reason: "background refresh done")
        }
    }

    func connectTimedOut(_ attempt: UInt64, reason: DisconnectReason) {
        guard currentAttemptID == attempt else { return }
        connectionEnded(reason: reason, disposition: .retry)
    }

    /// The policy gave up: what waits for a connection fails with its reason.
    func policyGaveUp(_ reason: DisconnectReason) {
        let error = SessionError(.disconnected, "disconnected: \(reason)", reason: reason)
        if reason.code == .credentialsRejected {
            // No connection comes with these credentials: what waits for one fails now.
            failOutbox(SessionError(.rejected, "not sent: the server rejected the credentials (\(reason))", reason: reason))
        }
        failAllRequests(error)
        abandonRecovery()
        failRefresh(error)
    }

    var currentAttemptID: UInt64? { link.attemptID }

    /// The open socket of `attempt`, or `nil`: an event of an earlier socket finds nothing.
    func connection(of attempt: UInt64) -> Connection? {
        guard let connection = link.connection, connection.attempt.id == attempt else { return nil }
        return connection
    }

    /// Starts opening the socket of the controller's `attempt` (for the policy, or for a
    /// background refresh); its connect timeout and status come from the controller.
    func startAttempt(_ id: UInt64) {
        guard case .idle = link else { return }
        recoveryAttemptStarted()
        let attempt = Attempt(id: id, cancel: OneShot(), settled: OneShot())
        spawn(.open(attempt: attempt.id, cancel: attempt.cancel, settled: attempt.settled, after: runtime.lastSettled, resuming: resumeInHandshake(), continuing: wireSessionState))
        runtime.lastSettled = attempt.settled
        link = .opening(attempt)
    }

    /// Lets go of the socket (or the attempt), whatever its state; reports nothing. A close of
    /// the client's own (`goodbye`) says the protocol's goodbye first (MQTT's DISCONNECT); a
    /// connection already lost or broken is just closed.
    func teardownLink(code: CloseCode, reason: String, goodbye: Bool = true) {
        switch link {
        case .idle:
            return
        case .opening(let attempt):
            attempt.cancel.fire()
        case .authenticating(let connection), .open(let connection, _):
            if goodbye { sayGoodbye() }
            connection.close(code, reason: reason)
            if let machine = connection.machine {
                wireSessionState = machine.sessionState
                if let durable = machine.durableSessionState, durable != durableWireSessionState {
                    durableWireSessionState = durable
                    record([.wireState(durable)])
                }
            }
            dropSocketTimers(of: connection.attempt.id)
        }
        link = .idle
    }

    /// Cancels every timer of `attempt`'s socket.
    func dropSocketTimers(of attempt: UInt64) {
        for key in runtime.timers.keys where key.attempt == attempt { cancelTimer(key) }
    }

    /// Arms a timer of the open socket (none when there is no socket).
    func arm(_ timer: SocketTimer, after delay: Duration) {
        guard let connection = link.connection else { return }
        arm(.socket(connection.attempt.id, timer), after: delay)
    }

    /// Cancels a timer of the open socket.
    func cancelTimer(_ timer: SocketTimer) {
        guard let connection = link.connection else { return }
        cancelTimer(.socket(connection.attempt.id, timer))
    }

    func connectionOpened(attempt: UInt64, connection: any TransportConnection, token: Secret?, handshake: Handshake, settled: OneShot) {
        let (outbound, stream) = AsyncStream<Outbound>.makeStream()
        let continuation = OutboundSink(continuation: stream, activity: clock.activity)
        guard case .opening(let current) = link, current.id == attempt else {
            // A socket for an attempt given up on: close it. The writer fires its `settled`.
            continuation.yield(.close(.normal, reason: "connect cancelled"))
            continuation.finish()
            spawn(.write(attempt: attempt, connection: connection, frames: outbound, settled: settled))
            return
        }
        spawn(.write(attempt: attempt, connection: connection, frames: outbound, settled: current.settled))
        spawn(.read(attempt: attempt, connection: connection, cancel: current.cancel))
        settings.logger.log(
            .debug,
            "attempt \(attempt): socket open (subprotocol \(connection.subprotocol ?? "none"), \(handshake.carried.count) subscriptions carried"
                + (handshake.tentativelyCarried > 0 ? ", \(handshake.tentativelyCarried) of them if the server still holds its set" : "") + "), authenticating"
        )
        upgradeRefusalsInARow = 0
        var machine = settings.wireProtocol.makeConnectionMachine(continuing: wireSessionState, handshake: handshake, subprotocol: connection.subprotocol)
        // The protocol's own keep-alive as the liveness says, before anything is sent.
        _ = machine.keepAliveStretched(by: runtime.control.liveness.keepAliveStretch)
        link = .authenticating(Connection(attempt: current, socket: connection, outbound: continuation, machine: machine))
        if handshake.requiresSubprotocol, !handshake.subprotocols.isEmpty, !handshake.subprotocols.contains(connection.subprotocol ?? "") {
            // The server does not speak the protocol the settings name: retrying cannot help.
            let chosen = connection.subprotocol.map { "'\($0)'" } ?? "none"
            let detail = "the server chose WebSocket subprotocol \(chosen), not \(handshake.subprotocols.joined(separator: " or "))"
            connectionEnded(reason: .error(detail), disposition: .doNotRetry, closeCode: .protocolError)
            return
        }
        guard let actions = withMachine({ $0.start(credentials: token) }) else { return }
        carry(actions)
    }

    func openFailed(attempt: UInt64, error: any Error) {
        guard case .opening(let current) = link, current.id == attempt else { return }
        link = .idle
        let detail = (error as? TransportError)?.description ?? String(describing: error)
        settings.logger.log(.info, "connect attempt failed: \(detail)")
        var ending = WireEnding(.error(detail), .retry)
        if let refusal = error as? TransportError, refusal.code == .serverUntrusted {
            // The app's own trust evaluation refused the server: the same server would be
            // refused again.
            ending = WireEnding(DisconnectReason(.serverUntrusted, detail: refusal.message), .doNotRetry)
        } else if let status = (error as? TransportError)?.httpStatus {
            // What a refused upgrade means is the protocol's to say (401/403: the credentials),
            // knowing how many attempts in a row were refused.
            upgradeRefusalsInARow += 1
            ending = settings.wireProtocol.ending(httpStatus: status, refusalsInARow: upgradeRefusalsInARow)
        }
        if refreshOwnsLink {
            failRefresh(SessionError(.connectionLost, "the background refresh could not connect: \(ending.reason)", reason: ending.reason))
            return
        }
        perform(runtime.control.lost(attempt, reason: ending.reason, disposition: ending.disposition, uptime: nil))
    }

    func transportEvent(attempt: UInt64, event: TransportEvent) {
        guard connection(of: attempt) != nil else { return }
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
        if case .open(_, let since) = link { uptime = clock.elapsed(since: since) }
        let attempt = currentAttemptID
        // Sent behind credentials the server rejected: it applied none of it (the protocol's
        // rule), so each fails with that cause rather than "it may have been applied".
        let refusedBehindCredentials = link.connection?.pipelining == true && reason.code == .credentialsRejected
        settings.logger.log(.info, "connection ended: \(reason) (\(disposition))")
        teardownLink(code: closeCode, reason: "connection ended", goodbye: false)
        if refusedBehindCredentials {
            let error = SessionError(.rejected, "not applied: the server rejected the credentials it was sent behind (\(reason))", reason: reason)
            failAllRequests(error, requeuePublishes: false)
        } else {
            failAllRequests(SessionError(.connectionLost, "the connection was lost: \(reason)", reason: reason))
        }
        if refreshOwnsLink {
            // The policy never had this connection: the refresh ends, the policy hears nothing.
            failRefresh(SessionError(.connectionLost, "the background refresh lost its connection: \(reason)", reason: reason))
            return
        }
        guard let attempt else { return }
        perform(runtime.control.lost(attempt, reason: reason, disposition: disposition, uptime: uptime))
    }

    /// The server accepted the credentials.
    func authenticated() {
        guard case .authenticating(let connection) = link else { return }
        link = .open(connection, since: clock.now)
        // What the handshake settled (MQTT: the client id the session made, whether the broker
        // kept its session) is kept at once: a kill while this socket is open must not relaunch
        // with another client id, and lose the broker's session.
        if storeLink != nil { storeWireState() }
        if connection.pipelining {
            // The replay went out with the credentials; the app's steps waited for this.
            connection.pipelining = false
            let held = connection.heldCustomRuns
            connection.heldCustomRuns = []
            for (id, attempt) in held { startCustomRun(id, attempt: attempt) }
            checkRecoveryComplete()
        } else {
            startReplay()
        }
        armHeartbeat()
        perform(runtime.control.opened(connection.attempt.id))
    }

    /// The protocol takes requests ahead of its handshake's answer: replay now, in the same
    /// flight as the credentials.
    func pipelineReplay() {
        guard case .authenticating(let connection) = link, !connection.pipelining else { return }
        connection.pipelining = true
        startReplay()
    }

    /// Requests may go on the wire now: connected, or pipelined behind the credentials.
    var acceptsRequests: Bool {
        switch link {
        case .open: true
        case .authenticating(let connection): connection.pipelining
        case .idle, .opening: false
        }
    }

    /// What the next socket will resubscribe, when the protocol may carry it in its upgrade
    /// request: every channel, in the journal.steps's order, when the replay sends them all at once.
    func resumeInHandshake() -> [WireResume] {
        guard settings.replayMode == .pipelined else { return [] }
        return journal.steps.compactMap { id in
            guard let channel = channelName(of: id), let state = channels[channel] else { return nil }
            return WireResume(topic: Topic(channel, options: state.options), position: resumePosition(of: state))
        }
    }

    // MARK: Timers

    func timerFired(_ key: TimerKey) {
        switch key {
        case .policy(let id):
            perform(runtime.control.timerFired(.policy(id)))
        case .connectTimeout:
            perform(runtime.control.timerFired(.connectTimeout))
        case .requests:
            requestTimeoutsFired()
        case .outboxDeadline:
            armOutboxDeadline()
        case .refreshDeadline:
            failRefresh(SessionError(.timedOut, "the background refresh did not finish within its deadline"))
        case .subscriberStall:
            subscriberStallCheck()
        case .socket(let attempt, let timer):
            // A timer of a socket let go finds nothing.
            guard connection(of: attempt) != nil else { return }
            switch timer {
            case .heartbeat: sendHeartbeat()
            case .subscribes: subscribeTimeoutsFired()
            case .recoveryStep(let id): customStepTimedOut(id)
            case .wire(let name): wireTimerFired(name)
            }
        }
    }
}

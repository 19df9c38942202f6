import ConnectionPolicy

extension Session {
    /// The requests waiting for their replies: one timer (`TimerKey.requests`) is armed for
    /// the earliest deadline, not one per request (a replay sends hundreds at once).
    struct PendingRequests {
        var nextID: RequestID = 1
        var waiting: [RequestID: PendingRequest] = [:]
        /// Every pending request's deadline (timer `.requests`).
        var deadlines = Deadlines()
    }

    /// One turn of the session: the frames it makes go to the writer together when it ends,
    /// and the messages it delivers go to each subscriber together.
    struct Turn {
        /// How deep `inOneTurn` is nested: the outermost one flushes.
        var depth = 0
        /// The turn's runs of messages, held in their channels until it ends.
        var deliveries = TurnDeliveries()
        /// Inputs the funnel took, and how many were a socket's reads: each input is one wake-up
        /// of the run loop (``Session/funnelCounts``).
        var inputs = 0
        var reads = 0
        /// While a run of subscribe answers is carried out: the channels whose replay steps
        /// succeeded, told to the replay together at the run's end (``Session/subscribedInARow(_:from:)``).
        var answeredSteps: [String]?
    }

    /// A request waiting for its reply.
    struct PendingRequest {
        /// Who waits for it.
        enum Kind {
            /// A host call (publish, an outbox entry).
            case caller
            /// The app's `ping()`: a missing pong also ends the connection (it is the heartbeat
            /// in the background).
            case appPing
            /// The session's own heartbeat, or the probe on return to the foreground.
            case heartbeat
        }

        let waiter: CheckedContinuation<PublishReceipt, any Error>?
        let kind: Kind
        /// For a publish: the entry, to re-send if the connection is lost before the reply.
        let publish: OutboxEntry?

        init(waiter: CheckedContinuation<PublishReceipt, any Error>?, kind: Kind = .caller, publish: OutboxEntry? = nil) {
            self.waiter = waiter
            self.kind = kind
            self.publish = publish
        }
    }

    /// Sends the protocol's ping and waits for its answer, within the request timeout. On a
    /// protocol the client cannot ping (Socket.IO), the answer is the server's next frame, and
    /// the protocol's own watchdog on the server's heartbeat bounds the wait.
    func requestPing(kind: PendingRequest.Kind) async throws -> PublishReceipt {
        let id = makeRequestID()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<PublishReceipt, any Error>) in
            requests.waiting[id] = PendingRequest(waiter: continuation, kind: kind)
            if canProbe { armRequestTimeout(id, after: settings.requestTimeout) }
            perform(.ping(id))
        }
    }

    /// Indicates that the client can elicit an answer now; otherwise liveness is the server's
    /// heartbeat, watched by the protocol.
    var canProbe: Bool { settings.wireProtocol.capabilities.canProbe }

    func resolveRequest(_ id: RequestID, with result: Result<PublishReceipt, any Error>) -> Bool {
        guard let pending = requests.waiting.removeValue(forKey: id) else { return false }
        cancelRequestTimeout(id)
        if let publish = pending.publish { endPublish(publish, result) } else { pending.waiter?.resume(with: result) }
        outboxRequestSettled(id)
        switch (pending.kind, result) {
        case (.heartbeat, .success):
            armHeartbeat()
        case (.heartbeat, .failure(let error)), (.appPing, .failure(let error)):
            if let error = error as? SessionError, error.code == .timedOut {
                connectionEnded(reason: DisconnectReason(.networkLost, detail: "no pong in time: the connection is half-open"), disposition: .retry)
            }
        case (.caller, _), (.appPing, .success):
            break
        }
        return true
    }


    /// The connection is gone (or the session is): every pending request fails with `error` —
    /// but an unacknowledged publish, with `requeuePublishes`, goes back to the outbox to be
    /// re-sent with its key on the next connection, where the protocol's server applies a key
    /// at most once. Where it does not (graphql-transport-ws, Socket.IO), a re-send could apply
    /// it twice: the publish fails with `connectionLost` ("it may have been applied") instead.
    func failAllRequests(_ error: SessionError, requeuePublishes: Bool = true) {
        let pending = requests.waiting
        requests.waiting = [:]
        var requeued: [OutboxEntry] = []
        let mayResend = requeuePublishes && settings.wireProtocol.capabilities.deduplicatesPublishes
        for (id, request) in pending {
            cancelRequestTimeout(id)
            if mayResend, let entry = request.publish {
                requeued.append(entry)
            } else if requeuePublishes, let entry = request.publish {
                endPublish(entry, .failure(SessionError(
                    error.code,
                    "the publish was sent and the connection was lost before its acknowledgement; this protocol has no idempotency key, so it is not re-sent: it may have been applied (\(error.message))",
                    reason: error.reason
                )))
            } else if let entry = request.publish {
                endPublish(entry, .failure(error))
            } else {
                request.waiter?.resume(throwing: error)
            }
        }
        requeue(requeued)
        failAllSubscribeWaiters(error)
    }
}

extension Session {
    /// Arms the next heartbeat: only with an open connection, in the foreground, on a protocol
    /// the client can ping (otherwise the protocol watches the server's heartbeat).
    func armHeartbeat() {
        guard let heartbeat = runtime.control.liveness.heartbeat, canProbe, case .open = link, lifecycle.isForeground else { return }
        arm(SocketTimer.heartbeat, after: heartbeat.interval)
        settings.logger.log(.debug, "heartbeat armed: next ping in \(heartbeat.interval)")
    }

    /// Sends the heartbeat's ping; a missing pong within the timeout ends the connection. When
    /// the liveness allows it, a ping the traffic made needless is skipped: the server was heard
    /// from within the interval (the connection is alive), and the client itself sent something
    /// within two intervals (a server that closes a silent client — the reference server after
    /// 120 s — still hears from it). The next check is then one interval after the server was
    /// last heard from: a dead connection is still found within interval + timeout of the last
    /// sign of life, as with a ping every interval.
    func sendHeartbeat() {
        guard let heartbeat = runtime.control.liveness.heartbeat else { return }
        if runtime.control.liveness.skipsHeartbeatWhenAlive, let connection = link.connection, let inbound = connection.lastInbound,
            let outbound = connection.lastOutbound
        {
            let heard = clock.elapsed(since: inbound)
            if heard < heartbeat.interval, clock.elapsed(since: outbound) < heartbeat.interval * 2 {
                arm(SocketTimer.heartbeat, after: heartbeat.interval - heard)
                return
            }
        }
        sendLivenessPing(timeout: heartbeat.timeout)
    }

    /// Back in the foreground, or on a changed path, with a connection that claims to be open:
    /// one ping with a short timeout before it is trusted. A protocol the client cannot ping
    /// answers with the server's next frame, within one server heartbeat (its watchdog ends a
    /// silent connection).
    func probeConnection() {
        guard runtime.control.liveness.probesOnReturn, case .open = link else { return }
        cancelTimer(SocketTimer.heartbeat)
        sendLivenessPing(timeout: canProbe ? settings.foregroundProbeTimeout : nil)
    }

    /// The control decided a new liveness: the protocol's own keep-alive follows it; a heartbeat
    /// armed now is armed again at the new interval (none, when the heartbeat is off); one not
    /// armed (a liveness ping in flight, the background) is armed as usual, after the pong.
    func livenessChanged(_ liveness: Liveness) {
        if let actions = withMachine({ $0.keepAliveStretched(by: liveness.keepAliveStretch) }) { carry(actions) }
        guard let connection = link.connection, runtime.timers[.socket(connection.attempt.id, .heartbeat)] != nil else { return }
        cancelTimer(SocketTimer.heartbeat)
        armHeartbeat()
    }

    /// In the background the session runs no heartbeat of its own (nor its pending ping).
    func stopHeartbeat() {
        cancelTimer(SocketTimer.heartbeat)
        for (id, request) in requests.waiting where request.kind == .heartbeat {
            requests.waiting[id] = nil
            cancelRequestTimeout(id)
        }
    }

    private func sendLivenessPing(timeout: Duration?) {
        guard case .open = link else { return }
        let id = makeRequestID()
        requests.waiting[id] = PendingRequest(waiter: nil, kind: .heartbeat)
        if let timeout { armRequestTimeout(id, after: timeout) }
        perform(.ping(id))
    }

    // MARK: Request timeouts

    /// Fails request `id` if no reply comes within `timeout`.
    func armRequestTimeout(_ id: RequestID, after timeout: Duration) {
        let change = requests.deadlines.add(id, deadline: clock.deadline(after: timeout), timeout: timeout, remaining: timeout)
        apply(change, to: .requests)
    }

    /// Request `id` was answered (or is gone): its deadline no longer counts.
    func cancelRequestTimeout(_ id: RequestID) {
        apply(requests.deadlines.remove(id), to: .requests)
    }

    /// The request timer fired: fail every request whose deadline passed (oldest first), and
    /// re-arm for the earliest that remains.
    func requestTimeoutsFired() {
        let clock = clock
        let (expired, change) = requests.deadlines.expire { clock.remaining(until: $0) }
        apply(change, to: .requests)
        for entry in expired { _ = resolveRequest(entry.id, with: .failure( SessionError(.timedOut, "no reply within \(entry.timeout)"))) }
    }

    /// Does what a set of deadlines says to its timer.
    func apply(_ change: Deadlines.TimerChange, to timer: TimerKey) {
        switch change {
        case .keep: break
        case .arm(let delay): arm(timer, after: delay)
        case .cancel: cancelTimer(timer)
        }
    }

    /// Does what a set of deadlines says to a timer of the open socket.
    func apply(_ change: Deadlines.TimerChange, to timer: SocketTimer) {
        guard let connection = link.connection else { return }
        apply(change, to: .socket(connection.attempt.id, timer))
    }
}

extension Session {
    /// A publish waiting for a connection.
    struct OutboxEntry {
        let key: UInt64
        let channel: String
        let data: JSONValue
        let deadline: SessionClock.Instant
        let waiter: CheckedContinuation<Ack, any Error>
    }

    /// Publishes `data` on `channel` and returns its sequence number once the server
    /// acknowledged it. Without a connection, the publish waits in the bounded outbox and is
    /// sent, in order, once the next connection's replay is done. On an open connection it goes
    /// out at once, unless publishes still wait in the outbox (a replay is running): then it
    /// queues behind them, so the app's publishes reach the server in the order they were made.
    /// A recovery step's own publishes go out at once even then — the outbox waits for the
    /// replay, and the replay for the step. Every call ends
    /// exactly once: acknowledged, or a typed error — `outboxFull`, `timedOut` (after
    /// `outboxTimeout` in the outbox, or `requestTimeout` for the reply), `connectionLost` (sent
    /// but unacknowledged: it may or may not have reached the server), `sessionEnded`, or
    /// `CancellationError` when the calling task is cancelled while the publish still waits in
    /// the outbox — it is then withdrawn and never sent. Once sent, it waits for its reply.
    public func publish(_ data: JSONValue, to channel: String) async throws -> UInt64 {
        try refuseIfEnded("publish")
        ensureStarted()
        guard !channel.isEmpty, channel.utf8.count <= 256 else {
            throw SessionError(.invalidArgument, "a channel name is 1 to 256 bytes (got \(channel.utf8.count))")
        }
        if case .open(_, let wire, _) = link, outbox.isEmpty || Self.recoveryStepOwner == ObjectIdentifier(self) {
            let ack = try await request(.publish(id: makeRequestID(), channel: channel, data: data), on: wire)
            return ack.sequence ?? 0
        }
        guard outbox.count < settings.outboxLimit else {
            throw SessionError(.outboxFull, "\(outbox.count) publishes already wait for a connection (status: \(status))")
        }
        do {
            _ = try settings.codec.encode(ClientMessage.publish(id: 0, channel: channel, data: data))
        } catch {
            throw SessionError(.encodingFailed, error.description)
        }
        let key = makeSerial()
        let ack = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Ack, any Error>) in
                if Task.isCancelled {
                    waiter.resume(throwing: CancellationError())
                    return
                }
                let deadline = clock.deadline(after: settings.outboxTimeout)
                outbox.append(OutboxEntry(key: key, channel: channel, data: data, deadline: deadline, waiter: waiter))
                if outbox.count == 1 { armOutboxDeadline() }
                flushOutboxIfReady()
            }
        } onCancel: {
            handleFromCancellation(.publishCancelled(key))
        }
        return ack.sequence ?? 0
    }

    /// How many publishes wait in the outbox.
    public var outboxCount: Int { outbox.count }

    /// Sends the outbox, in order, when connected and no replay is running.
    func flushOutboxIfReady() {
        guard !outbox.isEmpty, case .open(_, let wire, _) = link, recovery?.plan?.isFinished ?? true else { return }
        let entries = outbox
        outbox = []
        cancelTimer(.outboxDeadline)
        for entry in entries {
            let id = makeRequestID()
            requests[id] = PendingRequest(waiter: entry.waiter)
            arm(.request(id), after: settings.requestTimeout)
            recovery?.flushing.insert(id)
            send(.publish(id: id, channel: entry.channel, data: entry.data), on: wire)
        }
    }

    /// An outbox publish was answered (either way).
    func outboxRequestSettled(_ id: RequestID) {
        guard recovery?.flushing.remove(id) != nil else { return }
        recovery?.flushed += 1
        checkRecoveryComplete()
    }

    /// Arms the deadline of the oldest entry — in the foreground only: in the background the
    /// session arms no timer of its own.
    func armOutboxDeadline() {
        expireOutbox()
        guard lifecycle.isForeground, let first = outbox.first else {
            cancelTimer(.outboxDeadline)
            return
        }
        arm(.outboxDeadline, after: clock.remaining(until: first.deadline))
    }

    /// Fails the entries whose time ran out.
    func expireOutbox() {
        while let first = outbox.first, clock.remaining(until: first.deadline) <= .zero {
            outbox.removeFirst()
            first.waiter.resume(throwing: SessionError(.timedOut, "the publish waited \(settings.outboxTimeout) for a connection"))
        }
    }

    /// A cancelled caller's publish leaves the outbox unsent (if it is still there).
    func withdrawFromOutbox(_ key: UInt64) {
        guard let index = outbox.firstIndex(where: { $0.key == key }) else { return }
        let entry = outbox.remove(at: index)
        entry.waiter.resume(throwing: CancellationError())
        if index == 0 { armOutboxDeadline() }
    }

    func failOutbox(_ error: SessionError) {
        let entries = outbox
        outbox = []
        cancelTimer(.outboxDeadline)
        for entry in entries { entry.waiter.resume(throwing: error) }
    }
}

extension Session {
    /// A publish until its acknowledgement: waiting in the outbox, or sent and waiting for the
    /// reply (then it travels in its ``PendingRequest``).
    struct OutboxEntry {
        /// Orders entries by when the app called `publish` (and identifies a withdrawal).
        let key: UInt64
        let channel: String
        let data: JSONValue
        /// The size of `data` as JSON text (what ``AppSettings/outboxByteLimit`` counts).
        let bytes: Int
        /// The idempotency key on the wire: the same for every send of this publish, so the
        /// server applies it at most once.
        let publishKey: String
        let deadline: SessionClock.Instant
        /// When the app made it (wall clock, Unix milliseconds): what the store keeps.
        let createdAt: Int64
        /// Who awaits it: `nil` for a publish of an earlier launch (its outcome goes to
        /// ``Session/earlierPublishOutcomes``).
        let waiter: CheckedContinuation<PublishReceipt, any Error>?
        /// Indicates that it went on the wire at least once: it may have been applied, so it is
        /// never withdrawn, and only re-sent with the same key.
        var wasSent = false
        /// With a store: the batch its record is written in (it goes on the wire only after).
        var recordedIn: UInt64 = 0
        /// With a store, on a protocol that cannot tell a re-send from a new publish: the batch
        /// that records "it went on the wire", written before it does — so that a relaunch never
        /// sends again, blindly, what may have been applied.
        var sentRecordedIn: UInt64?
    }

    /// Publishes `data` on `channel` and returns its ``PublishReceipt`` once the server
    /// acknowledged it (with its sequence number, on Tether's protocol) — or, where the server's
    /// protocol has no acknowledgement for it, once it was sent (`sentUnconfirmed`: never a
    /// pretended acknowledgement). On Tether's protocol it is applied **exactly once**: every
    /// publish carries an idempotency key, and one whose acknowledgement was lost with the
    /// connection waits in the outbox and is re-sent with the same key after the next
    /// connection's replay; the server applies a key at most once within its deduplication
    /// window (120 s on the reference server: keep `outboxTimeout` within it). Protocols without
    /// keys (graphql-transport-ws, Socket.IO) never re-send a publish that went on the wire: one
    /// whose acknowledgement was lost with the connection fails with `connectionLost` ("it may
    /// have been applied"); unsent ones wait in the outbox as always (see <doc:BackendProtocols>). With graphql-transport-ws, `data` is the mutation:
    /// `{"query", "variables"?}`.
    ///
    /// Without a connection, the publish waits in the bounded outbox and is sent, in order, once
    /// the next connection's replay is done. On an open connection it goes out at once, unless
    /// publishes still wait in the outbox (a replay is running): then it queues behind them, so
    /// the app's publishes reach the server in the order they were made. A recovery step's own
    /// publishes go out at once even then — the outbox waits for the replay, and the replay for
    /// the step. Every call ends exactly once: with its receipt, or a typed error — `outboxFull`,
    /// `encodingFailed` (at once: data the protocol cannot carry), `rejected` (the server's
    /// error), `timedOut` (after `outboxTimeout` unsent, or `requestTimeout` with no reply: it
    /// may have been applied), `connectionLost` (sent, then `outboxTimeout` passed without a
    /// connection to re-send it on: it may have been applied), `sessionEnded`, or
    /// `CancellationError` when the calling task is cancelled while the publish was never sent —
    /// it is then withdrawn. Once sent, it is not withdrawn: it waits for its acknowledgement.
    @discardableResult
    public func publish(_ data: JSONValue, to channel: String) async throws -> PublishReceipt {
        try refuseIfEnded("publish")
        ensureStarted()
        guard !channel.isEmpty, channel.utf8.count <= 256 else {
            throw SessionError(.invalidArgument, "a channel name is 1 to 256 bytes (got \(channel.utf8.count))")
        }
        let publishKey = Self.makePublishKey()
        if let problem = settings.wireProtocol.encodingProblem(publishing: data, to: channel, key: publishKey) {
            throw SessionError(.encodingFailed, problem)
        }
        let json = JSONWriter.text(data)
        let sendsNow: Bool
        if acceptsRequests, outbox.isEmpty || Self.recoveryStepOwner == ObjectIdentifier(self) {
            sendsNow = true
        } else {
            sendsNow = false
            try checkOutboxRoom(for: json.utf8.count)
        }
        let key = makeSerial()
        let receipt = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<PublishReceipt, any Error>) in
                if Task.isCancelled {
                    waiter.resume(throwing: CancellationError())
                    return
                }
                var entry = OutboxEntry(
                    key: key, channel: channel, data: data, bytes: json.utf8.count, publishKey: publishKey,
                    deadline: clock.deadline(after: settings.outboxTimeout), createdAt: Self.wallClockMilliseconds(), waiter: waiter
                )
                // Written ahead: it goes on the wire once the store holds it. A recovery step's own
                // publishes go at once (the outbox waits for the step).
                entry.recordedIn = record([.publish(StoredPublishRecord(key: publishKey, channel: channel, json: json, createdAt: entry.createdAt))])
                let isStepPublish = Self.recoveryStepOwner == ObjectIdentifier(self)
                if sendsNow, acceptsRequests, isStepPublish || isRecorded(entry) {
                    sendPublish(entry)
                } else {
                    outbox.append(entry)
                    outboxBytes += entry.bytes
                    if outbox.count == 1 { armOutboxDeadline() }
                    flushOutboxIfReady()
                }
            }
        } onCancel: {
            handleFromCancellation(.publishCancelled(key))
        }
        return receipt
    }

    /// 128 random bits, as 32 hex digits: unique per publish, across clients.
    static func makePublishKey() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// Sends a publish and waits for its reply (within the request timeout).
    @discardableResult
    func sendPublish(_ entry: OutboxEntry) -> RequestID {
        var entry = entry
        if !entry.wasSent, entry.sentRecordedIn == nil { record([.publishSent(key: entry.publishKey)]) }
        entry.wasSent = true
        let id = makeRequestID()
        requests.waiting[id] = PendingRequest(waiter: entry.waiter, publish: entry)
        armRequestTimeout(id, after: settings.requestTimeout)
        perform(.publish(id, Topic(entry.channel), entry.data, key: entry.publishKey))
        return id
    }

    /// Publishes sent on a connection that is gone, unacknowledged: back to the front of the
    /// outbox, in the order they were made, to be re-sent with their keys.
    func requeue(_ entries: [OutboxEntry]) {
        guard !entries.isEmpty else { return }
        outbox.insert(contentsOf: entries.sorted { $0.key < $1.key }, at: 0)
        outboxBytes += entries.reduce(0) { $0 + $1.bytes }
        armOutboxDeadline()
    }

    /// How many publishes wait in the outbox (read without `await`).
    public nonisolated var outboxCount: Int { outboxBroadcaster.current ?? 0 }

    /// Sends the outbox, in order, when requests may go out and the replay has nothing ahead of
    /// it but resubscribes already sent (the server handles a connection's frames in order, so
    /// the publishes still follow them).
    func flushOutboxIfReady() {
        guard !outbox.isEmpty, acceptsRequests else { return }
        if let plan = link.connection?.replay?.plan, !plan.isSettled(exceptRunning: { channelName(of: $0) != nil }) { return }
        // In order: up to the first whose record the store does not hold yet.
        var ready = 0
        while ready < outbox.count, readyToSend(&outbox[ready]) { ready += 1 }
        guard ready > 0 else { return }
        let entries = outbox.prefix(ready)
        outbox.removeFirst(ready)
        outboxBytes -= entries.reduce(0) { $0 + $1.bytes }
        if outbox.isEmpty { cancelTimer(.outboxDeadline) } else { armOutboxDeadline() }
        for entry in entries {
            let id = sendPublish(entry)
            link.connection?.replay?.flushing.insert(id)
        }
    }

    /// Indicates that `entry` may go on the wire: the store holds its record — and, on a protocol
    /// that cannot tell a re-send from a new publish, the record that it went out, which is
    /// written now if it was not.
    private func readyToSend(_ entry: inout OutboxEntry) -> Bool {
        guard isRecorded(entry) else { return false }
        guard storeLink != nil, !entry.wasSent, entry.sentRecordedIn == nil, !settings.wireProtocol.capabilities.deduplicatesPublishes else { return true }
        entry.sentRecordedIn = record([.publishSent(key: entry.publishKey)])
        return false
    }

    /// An outbox publish was answered (either way).
    func outboxRequestSettled(_ id: RequestID) {
        guard link.connection?.replay?.flushing.remove(id) != nil else { return }
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

    /// Fails the entries whose time ran out (entries are in call order, so deadlines ascend).
    func expireOutbox() {
        while let first = outbox.first, clock.remaining(until: first.deadline) <= .zero {
            outbox.removeFirst()
            outboxBytes -= first.bytes
            if first.wasSent {
                endPublish(first, .failure(SessionError(
                    .connectionLost, "the publish was sent, its acknowledgement was lost with the connection, and no connection came within \(settings.outboxTimeout) to re-send it: it may have been applied"
                )))
            } else {
                endPublish(first, .failure(SessionError(.timedOut, "the publish waited \(settings.outboxTimeout) for a connection")))
            }
        }
    }

    /// A cancelled caller's publish leaves the outbox unsent (if it is still there and was never
    /// sent: one that went on the wire may have been applied, so it completes).
    func withdrawFromOutbox(_ key: UInt64) {
        guard let index = outbox.firstIndex(where: { $0.key == key && !$0.wasSent }) else { return }
        let entry = outbox.remove(at: index)
        outboxBytes -= entry.bytes
        endPublish(entry, .failure(CancellationError()))
        if index == 0 { armOutboxDeadline() }
    }

    /// Throws `outboxFull` when one more publish of `bytes` (its data as JSON text) would pass
    /// ``AppSettings/outboxLimit`` or ``AppSettings/outboxByteLimit``.
    func checkOutboxRoom(for bytes: Int) throws {
        guard outbox.count < settings.outboxLimit else {
            throw SessionError(.outboxFull, "\(outbox.count) publishes already wait for a connection (status: \(status))")
        }
        guard outboxBytes + bytes <= settings.outboxByteLimit else {
            throw SessionError(.outboxFull, "the outbox holds \(outboxBytes) bytes; this publish's \(bytes) would pass outboxByteLimit (\(settings.outboxByteLimit))")
        }
    }

    func failOutbox(_ error: SessionError) {
        let entries = outbox
        outbox = []
        outboxBytes = 0
        cancelTimer(.outboxDeadline)
        for entry in entries { endPublish(entry, .failure(error)) }
    }
}

import Foundation

extension Session {
    /// Every publish an earlier launch made that the store still keeps, in the order they were
    /// made, with where each got: waiting, may have been applied, acknowledged, failed. One ends
    /// once (``earlierPublishOutcomes``) and stays listed until ``dismissPublish(_:)``.
    public var earlierPublishes: [EarlierPublish] { earlier.map(\.value) }

    /// The outcome of each publish of an earlier launch, as it comes: one per publish, never
    /// two. Any number of subscribers; a stream does not replay (``earlierPublishes`` lists
    /// what came before it).
    public nonisolated var earlierPublishOutcomes: AsyncStream<EarlierPublish> { earlierOutcomeBroadcaster.updates(replayingCurrent: false) }

    /// Whether what the session keeps outlives the process (read without `await`).
    public nonisolated var storeStatus: SessionStoreStatus { storeStatusBroadcaster.current ?? .off }

    /// ``storeStatus`` now, then every change.
    public nonisolated var storeStatusUpdates: AsyncStream<SessionStoreStatus> { storeStatusBroadcaster.updates(replayingCurrent: true) }

    /// What the store kept and could not read back at launch (damage), if anything: the app is
    /// told what and how much, never left to find out.
    public nonisolated var storeLoss: StoreLoss? { storeLossBroadcaster.current }

    /// Forgets a publish of an earlier launch: one that ended, one that may have been applied
    /// (the app decided not to send it again), or one still waiting that never went on the wire
    /// (withdrawn). Throws `invalidArgument` for an unknown id, or for one on the wire now.
    public func dismissPublish(_ id: String) throws {
        try refuseIfEnded("dismissPublish")
        ensureStarted()
        guard let index = earlier.firstIndex(where: { $0.key == id }) else {
            throw SessionError(.invalidArgument, "no publish of an earlier launch has id \(id)")
        }
        if case .waiting = earlier[index].value.state {
            guard let position = outbox.firstIndex(where: { $0.publishKey == id && !$0.wasSent }) else {
                throw SessionError(.invalidArgument, "publish \(id) is on the wire: it cannot be withdrawn")
            }
            outboxBytes -= outbox.remove(at: position).bytes
            if position == 0 { armOutboxDeadline() }
        }
        earlier.remove(at: index)
        record([.publishDismissed(key: id)])
    }

    /// Sends a publish of an earlier launch again, with its key: one that may have been applied
    /// (the app decided it was not), or one that failed. Its outcome comes as any earlier
    /// publish's. Throws `invalidArgument` for an unknown id, or one still waiting or acknowledged.
    public func retryPublish(_ id: String) throws {
        try refuseIfEnded("retryPublish")
        ensureStarted()
        guard let index = earlier.firstIndex(where: { $0.key == id }) else {
            throw SessionError(.invalidArgument, "no publish of an earlier launch has id \(id)")
        }
        let publish = earlier[index].value
        switch publish.state {
        case .mayHaveBeenApplied, .failed: break
        case .waiting, .acknowledged: throw SessionError(.invalidArgument, "publish \(id) is \(publish.state): there is nothing to retry")
        }
        let json = JSONWriter.text(publish.data)
        try checkOutboxRoom(for: json.utf8.count)
        earlier[index].value.state = .waiting
        // Made again now: its time in the outbox starts over.
        let record = StoredPublishRecord(key: id, channel: publish.channel, json: json, createdAt: Self.wallClockMilliseconds())
        let batch = self.record([.publishDismissed(key: id), .publish(record)])
        var entry = OutboxEntry(
            key: makeSerial(), channel: publish.channel, data: publish.data, bytes: json.utf8.count, publishKey: id,
            deadline: clock.deadline(after: settings.outboxTimeout), createdAt: record.createdAt, waiter: nil
        )
        entry.recordedIn = batch
        outbox.append(entry)
        outboxBytes += entry.bytes
        if outbox.count == 1 { armOutboxDeadline() }
        flushOutboxIfReady()
    }

    // MARK: Internals

    /// The publishes an earlier launch left in the store: those still to send join the outbox,
    /// in order (one sent on a protocol that cannot tell a re-send from a new publish waits for
    /// the app's decision); those that ended are listed until the app dismisses them.
    func restorePublishes(_ publishes: [StoredSession.Publish]) {
        let deduplicates = settings.wireProtocol.capabilities.deduplicatesPublishes
        let now = Self.wallClockMilliseconds()
        for publish in publishes {
            let stored = publish.record
            guard let data = try? JSONParser.parse(stored.json, maxDepth: 1024) else {
                settings.logger.log(.error, "a stored publish's data does not read back; it is dropped: \(stored.key)")
                record([.publishDismissed(key: stored.key)])
                continue
            }
            let createdAt = Date(timeIntervalSince1970: Double(stored.createdAt) / 1000)
            var state = EarlierPublish.State.waiting
            if let outcome = publish.outcome {
                state = Self.state(of: outcome)
            } else if publish.wasSent, !deduplicates {
                state = .mayHaveBeenApplied
            } else {
                // Its time in the outbox runs in wall-clock time, across launches.
                let age = Duration.milliseconds(max(0, now - stored.createdAt))
                var entry = OutboxEntry(
                    key: makeSerial(), channel: stored.channel, data: data, bytes: stored.json.utf8.count, publishKey: stored.key,
                    deadline: clock.deadline(after: settings.outboxTimeout - age), createdAt: stored.createdAt, waiter: nil
                )
                entry.wasSent = publish.wasSent
                outbox.append(entry)
                outboxBytes += entry.bytes
            }
            earlier.append((stored.key, EarlierPublish(id: stored.key, channel: stored.channel, data: data, createdAt: createdAt, state: state)))
        }
        if !outbox.isEmpty { armOutboxDeadline() }
    }

    /// A publish ended: its caller learns how — for a publish of an earlier launch, the app
    /// through ``earlierPublishOutcomes`` — once the store has written that it ended, so that a
    /// kill right after cannot bring it back as waiting and tell the app a second time.
    func endPublish(_ entry: OutboxEntry, _ result: Result<PublishReceipt, any Error>) {
        guard storeLink != nil else {
            entry.waiter?.resume(with: result)
            return
        }
        if hasEnded, case .failure(let error as SessionError) = result, error.code == .sessionEnded {
            // Not an end: the store hands it to the next launch.
            entry.waiter?.resume(with: result)
            return
        }
        guard entry.waiter == nil, let index = earlier.firstIndex(where: { $0.key == entry.publishKey }) else {
            // Its caller has its outcome: nothing is left to keep.
            let batch = record([.publishDismissed(key: entry.publishKey)])
            if let waiter = entry.waiter { tellOnceStored(batch, .caller(waiter, result)) }
            return
        }
        let outcome: StoredOutcome = switch result {
        case .success(let receipt): .acknowledged(position: receipt.position, unconfirmed: receipt.confirmation == .sentUnconfirmed)
        case .failure(let error as SessionError): .failed(code: error.code.description, message: error.message)
        case .failure(let error): .failed(code: SessionError.Code.rejected.description, message: String(describing: error))
        }
        let batch = record([.publishEnded(key: entry.publishKey, outcome: outcome)])
        earlier[index].value.state = Self.state(of: outcome)
        tellOnceStored(batch, .earlier(earlier[index].value))
    }

    /// An answer the app is given once the store holds what it depends on
    /// (``StoreLink/heldOutcomes``): a publish's outcome, or that a subscription is made.
    enum HeldOutcome {
        case caller(CheckedContinuation<PublishReceipt, any Error>, Result<PublishReceipt, any Error>)
        case earlier(EarlierPublish)
        case subscribed(CheckedContinuation<Void, any Error>)
    }

    /// Tells `outcome` now if batch `batch` is written, or once it is.
    func tellOnceStored(_ batch: UInt64, _ outcome: HeldOutcome) {
        if let link = storeLink, batch > link.finished {
            storeLink?.heldOutcomes.append((batch, outcome))
        } else {
            tell(outcome)
        }
    }

    /// Tells the outcomes whose batches the store has written; every one when `all` (the
    /// session ends: nothing is held past it).
    func tellStoredOutcomes(all: Bool = false) {
        guard let link = storeLink, !link.heldOutcomes.isEmpty else { return }
        let told = all ? link.heldOutcomes.count : link.heldOutcomes.prefix { $0.batch <= link.finished }.count
        guard told > 0 else { return }
        storeLink?.heldOutcomes.removeFirst(told)
        for held in link.heldOutcomes.prefix(told) { tell(held.outcome) }
    }

    private func tell(_ outcome: HeldOutcome) {
        switch outcome {
        case .caller(let waiter, let result): waiter.resume(with: result)
        case .earlier(let publish): earlierOutcomeBroadcaster.set(publish, onlyIfChanged: false)
        case .subscribed(let waiter): waiter.resume()
        }
    }

    static func state(of outcome: StoredOutcome) -> EarlierPublish.State {
        switch outcome {
        case .acknowledged(let position, let unconfirmed):
            .acknowledged(PublishReceipt(unconfirmed ? .sentUnconfirmed : .acknowledged, position: position))
        case .failed(let code, let message):
            .failed(SessionError(SessionError.Code(named: code), message))
        }
    }

    static func wallClockMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}

extension SessionError.Code {
    /// The code named `name` (``description``); `rejected` for a name this release does not know.
    init(named name: String) {
        self = Wrapped(rawValue: name).map(Self.init(wrapped:)) ?? .rejected
    }
}

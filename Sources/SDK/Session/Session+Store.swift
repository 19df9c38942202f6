import Foundation

extension Session {
    /// The session's link to its store: the records not yet handed to the writer, and how far
    /// the writer got. Records are written in batches, one at a time: what changes while a
    /// batch is written goes in the next one (group commit: a burst of publishes is one write).
    struct StoreLink {
        let store: any SessionStore
        let writer: AsyncStream<StoreWrite>.Continuation
        /// Records not yet handed to the writer.
        var pending: [StoreRecord] = []
        /// The last batch handed to the writer, and the last one it finished.
        var handed: UInt64 = 0
        var finished: UInt64 = 0
        /// What the store holds once every record is written: what a compaction writes.
        var folded: StoredSession
        /// Records appended since the file was last written whole.
        var appendedSinceCompaction = 0
        /// The next write must be the whole state (one failed: what it held was not kept).
        var needsReplace = false

        /// Channels with messages that wait for a batch to be written before they are handed
        /// over (``ChannelState/awaitingStore``).
        var awaitingDelivery: Set<String> = []
        /// Outcomes of publishes, told once the batch that records them is written.
        var heldOutcomes: [(batch: UInt64, outcome: HeldOutcome)] = []

        var isWriting: Bool { handed > finished }
        /// The batch that holds every record made so far, once written.
        var covering: UInt64 { pending.isEmpty ? handed : handed + 1 }
    }

    /// What the store's writer does, in order.
    enum StoreWrite: Sendable {
        case append([Data])
        case replace([Data])
    }

    /// Opens the store once, before the first thing the session does: what an earlier launch
    /// kept comes back (the outbox, the positions, the protocol's session state).
    func openStore() {
        guard let store = settings.store, !storeOpened else { return }
        storeOpened = true
        adoptStore(store)
    }

    /// Reads the store and makes it the session's: what it kept comes back, and what this
    /// launch did before it could be read (``storeAwaitsReadable``) is merged into it and
    /// written whole. A store that cannot be read is never taken for an empty one, never written.
    func adoptStore(_ store: any SessionStore) {
        let loaded: StoredRecords
        do {
            loaded = try store.load()
        } catch {
            storeAwaitsReadable = error.code == .notReadableYet
            settings.logger.log(.warning, "the store cannot be used; the session keeps everything in memory: \(error)")
            storeStatusBroadcaster.set(.inMemory(error))
            return
        }
        let merging = storeAwaitsReadable
        storeAwaitsReadable = false
        let records = loaded.records.compactMap(StoreRecord.decoded)
        var loss = loaded.loss
        if records.count < loaded.records.count {
            let unread = StoreLoss(bytes: 0, reason: "\(loaded.records.count - records.count) records this release cannot read")
            loss = loss.map { StoreLoss(bytes: $0.bytes, reason: $0.reason + "; " + unread.reason, damagedCopy: $0.damagedCopy) } ?? unread
        }
        var kept = StoredSession(records)
        if loaded.loss != nil {
            // Damage. Records found beyond it happened after what was read: they are applied.
            // What it held is unknown, so every publish not known to have ended may have gone
            // out (its "sent" record may be what was lost): the app is told which.
            for record in loaded.salvaged.compactMap(StoreRecord.decoded) { kept.apply(record) }
            let uncertain = kept.publishes.filter { $0.outcome == nil }.map(\.record.key)
            for key in uncertain { kept.apply(.publishSent(key: key)) }
            loss?.uncertainPublishes = uncertain
        }
        if let loss {
            settings.logger.log(.warning, "the store lost data: \(loss)")
            storeLossBroadcaster.set(loss)
        }
        var folded = kept
        if merging {
            // What this launch handed over in memory cannot come again: it counts as finished.
            for (channel, state) in channels where state.position != nil { channels[channel]?.finished = state.position }
            for record in recordsOfThisLaunch() { folded.apply(record) }
        }
        let (writes, writer) = AsyncStream<StoreWrite>.makeStream()
        storeLink = StoreLink(store: store, writer: writer, folded: folded, appendedSinceCompaction: records.count)
        spawn(.storeWriter(store, writes))
        storeStatusBroadcaster.set(.durable)
        // The protocol's state of an earlier launch, unless this one has a socket's already.
        if wireSessionState == nil, link.connection == nil {
            wireSessionState = kept.wireState
            durableWireSessionState = kept.wireState
        }
        // A channel this launch holds goes on from where it stands; the others resume from the
        // store when the app subscribes to them again.
        storedPositions = Dictionary(uniqueKeysWithValues: kept.positions.compactMap { channel, handed in
            channels[channel] == nil ? (channel, (handed, kept.finished[channel], kept.finishedAt[channel])) : nil
        })
        restorePublishes(kept.publishes)
        if loaded.loss != nil {
            // What the store holds now is what read back before the damage: the state is written whole.
            storeLink?.needsReplace = true
            writeIfIdle()
        }
        if merging {
            settings.logger.log(.notice, "the store is readable now: \(kept.publishes.count) publishes and \(storedPositions.count) channels of earlier launches merged with this one's")
            storeLink?.needsReplace = true
            writeIfIdle()
            flushOutboxIfReady()
        }
    }

    /// What the store would hold had it been readable since launch: this launch's publishes, its
    /// channels' positions, its protocol's state.
    private func recordsOfThisLaunch() -> [StoreRecord] {
        var records: [StoreRecord] = []
        for entry in outbox {
            records.append(.publish(StoredPublishRecord(key: entry.publishKey, channel: entry.channel, json: JSONWriter.text(entry.data), createdAt: entry.createdAt)))
            if entry.wasSent { records.append(.publishSent(key: entry.publishKey)) }
        }
        for (channel, state) in channels.sorted(by: { $0.key < $1.key }) {
            records.append(.position(channel: channel, position: state.position))
            if let finished = state.finished { records.append(.finished(channel: channel, position: finished, at: Self.wallClockMilliseconds())) }
        }
        if let state = link.connection?.machine?.durableSessionState ?? durableWireSessionState { records.append(.wireState(state)) }
        return records
    }

    /// The app came to the foreground: a store that could not be read yet (before the first
    /// unlock) is read again, and merged.
    func retryStoreIfAwaited() {
        guard storeAwaitsReadable, let store = settings.store else { return }
        adoptStore(store)
    }

    /// Records `records` in the store (nothing without one): the number of the batch they go in.
    @discardableResult
    func record(_ records: [StoreRecord]) -> UInt64 {
        guard storeLink != nil, !records.isEmpty else { return 0 }
        for record in records { storeLink?.folded.apply(record) }
        storeLink?.pending += records
        let batch = (storeLink?.handed ?? 0) + 1
        writeIfIdle()
        return batch
    }

    /// Hands the pending records to the writer, unless it is writing (they go next).
    func writeIfIdle() {
        guard var link = storeLink, !link.isWriting, !link.pending.isEmpty || link.needsReplace else { return }
        link.handed += 1
        let write: StoreWrite
        if link.needsReplace || link.appendedSinceCompaction > max(1024, 4 * link.folded.recordCount) {
            // The whole state in a few records, in place of the history that led to it.
            write = .replace(link.folded.records.map { $0.encoded() })
            link.appendedSinceCompaction = 0
            link.needsReplace = false
        } else {
            write = .append(link.pending.map { $0.encoded() })
            link.appendedSinceCompaction += link.pending.count
        }
        link.pending = []
        storeLink = link
        clock.activity?.begin()
        link.writer.yield(write)
    }

    /// The writer finished a batch: what waited for it goes on.
    func storeWritten(_ error: SessionStoreError?) {
        guard let handed = storeLink?.handed else { return }
        storeLink?.finished = handed
        if let error {
            // Nothing waits on a store that fails: the session goes on in memory, says so, and
            // writes the whole state with the next change.
            storeLink?.needsReplace = true
            settings.logger.log(.warning, "the store could not be written; the session keeps what changed in memory: \(error)")
            storeStatusBroadcaster.set(.inMemory(error))
        } else {
            storeStatusBroadcaster.set(.durable)
        }
        writeIfIdle()
        flushOutboxIfReady()
        handOverStored()
        tellStoredOutcomes()
    }

    /// Indicates that the store holds what `entry` needs before it goes on the wire.
    func isRecorded(_ entry: OutboxEntry) -> Bool {
        guard let link = storeLink else { return true }
        return entry.recordedIn <= link.finished && (entry.sentRecordedIn.map { $0 <= link.finished } ?? true)
    }

    /// The session ends: what is pending goes to the writer as its last batch; the store is
    /// closed once the writer is done (``closeStore()``).
    func finishStoreWrites() {
        guard var link = storeLink else { return }
        if !link.pending.isEmpty {
            clock.activity?.begin()
            link.writer.yield(.append(link.pending.map { $0.encoded() }))
            link.pending = []
        }
        link.writer.finish()
        storeLink = link
    }

    /// Lets the store go (the writer has ended).
    func closeStore() {
        tellStoredOutcomes(all: true)
        storeLink?.store.close()
    }

    /// Writes batches, one at a time, and reports each into the funnel.
    static func writeStore(_ store: any SessionStore, _ writes: AsyncStream<StoreWrite>, sink: InputSink, activity: (any ActivityTracking)?) async {
        for await write in writes {
            // Each batch was one unit of work from when it was handed over until it is reported.
            defer { activity?.end() }
            do throws(SessionStoreError) {
                switch write {
                case .append(let records): try store.append(records)
                case .replace(let records): try store.replace(with: records)
                }
                sink.yield(.storeWritten(nil))
            } catch {
                sink.yield(.storeWritten(error))
            }
        }
    }
}

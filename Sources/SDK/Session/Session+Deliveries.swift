extension Session {
    /// Messages of one channel for the app, in order: those that are not duplicates are counted
    /// for the recovery and held for the channel's subscribers until the turn ends
    /// (``flushDeliveries()``).
    /// `bytes`: their size for the subscribers' byte bound (the frames' where the machine knows
    /// it; otherwise their data's JSON text, counted here).
    func deliver(_ messages: [ChannelMessage], to channel: String, bytes: Int? = nil) {
        // The protocol's machine has dropped what was delivered already.
        guard turn.deliveries.hold(messages, bytes: bytes ?? messages.approximateByteCount, on: channel, in: &channels) else { return }
        // Counted for the recovery before the app sees them: when the app sees the last missed
        // message, the recovery's report is already published.
        if recovery != nil, countForRecovery(messages, on: channel) { checkRecoveryComplete() }
        if turn.depth == 0 { flushDeliveries() }
    }

    /// Counts the messages of `run` the socket's catch-up awaited into the recovery: `true`
    /// when one reached the channel's recovery target.
    private func countForRecovery(_ run: [ChannelMessage], on channel: String) -> Bool {
        guard let counted = link.connection?.replay?.counted(run, on: channel) else { return false }
        if counted.missed > 0 { recovery?.caughtUp[channel, default: 0] += counted.missed }
        return counted.reached
    }

    /// Hands every channel's held messages to its subscribers, one batch each, after bringing
    /// ``subscribedChannels`` up to date for them (one update, not one per message).
    func flushDeliveries() {
        guard !turn.deliveries.channels.isEmpty else { return }
        guard storeLink != nil else { return flushWithoutStore() }
        let names = turn.deliveries.takeChannels()
        // A channel let go meanwhile (its last subscriber stopped) is not mirrored back.
        let positions = names.compactMap { name in channels[name].map { (name, $0.position) } }
        diagnostics.update { mirror in
            for (name, last) in positions { mirror.channels[name] = .some(last) }
        }
        if settings.wireProtocol.capabilities.sessionStateTracksDeliveries { storeWireState() }
        for (name, _) in positions { storeChannel(name) }
        for (name, _) in positions {
            // Read, not copied: the state is changed right after.
            guard let held = channels[name]?.undelivered.count, held > 0 else { continue }
            if let link = storeLink, link.covering > link.finished {
                // Handed over only once the store knows they were (write-ahead): a kill in
                // between must find them flagged when they come again, not taken for new.
                channels[name]?.awaitingStore.append((link.covering, held))
                storeLink?.awaitingDelivery.insert(name)
                continue
            }
            if channels[name]?.awaitingStore.isEmpty == false { channels[name]?.awaitingStore = [] }
            handOver(held, on: name)
        }
    }

    /// ``flushDeliveries()`` without a store (nothing waits for a write): the turn's held
    /// messages taken and counted (``TurnDeliveries/takeWithoutStore(from:)``), then every channel
    /// mirrored in one update, then each batch goes to the subscribers it had.
    private func flushWithoutStore() {
        let taken = turn.deliveries.takeWithoutStore(from: &channels)
        diagnostics.update { mirror in
            for (name, last) in taken.positions { mirror.channels[name] = .some(last) }
        }
        for batch in taken.batches {
            acknowledgeFinished(batch.channel, through: batch.last)
            let refused = ChannelState.offer(
                batch.messages, bytes: batch.bytes, to: batch.subscribers, limit: settings.subscriberBufferLimit, byteLimit: settings.subscriberBufferBytes)
            if !refused.isEmpty { holdBack(refused, on: batch.channel) }
        }
        for (name, held) in taken.controlled { handOver(held, on: name) }
    }

    /// The store wrote what the held messages waited for: each channel's messages whose
    /// positions it now holds go to the subscribers.
    func handOverStored() {
        guard let link = storeLink, !link.awaitingDelivery.isEmpty else { return }
        for name in link.awaitingDelivery {
            guard let state = channels[name] else {
                storeLink?.awaitingDelivery.remove(name)
                continue
            }
            let written = state.awaitingStore.prefix { $0.batch <= link.finished }
            guard let count = written.last?.count else { continue }
            channels[name]?.awaitingStore = state.awaitingStore.dropFirst(written.count).map { ($0.batch, $0.count - count) }
            if channels[name]?.awaitingStore.isEmpty ?? true { storeLink?.awaitingDelivery.remove(name) }
            handOver(count, on: name)
        }
    }

    /// Hands the first `count` held messages of `name` to its subscribers, one batch each; a
    /// subscriber at its bound is held back (``holdBack(_:on:)``).
    private func handOver(_ count: Int, on name: String) {
        // In place; the subscribers as they are now get the batch.
        guard let ((batch, bytes), flowControlled, handedOver, subscribers) = channels[name]?.update({ ($0.takeHeld(count), $0.flowControlled, $0.handedOver, $0.subscribers) })
        else { return }
        guard !flowControlled else { return handOverControlled(batch, on: name) }
        counted(batch, on: name, from: handedOver)
        let refused = ChannelState.offer(
            batch, bytes: bytes, to: subscribers, limit: settings.subscriberBufferLimit, byteLimit: settings.subscriberBufferBytes)
        if !refused.isEmpty { holdBack(refused, on: name) }
    }

    /// `batch` is handed over on `name` (from its `start`-th message): counted as the channel's,
    /// for the store or the protocol's acknowledgements.
    func counted(_ batch: [ChannelMessage], on name: String, from start: UInt64) {
        guard !batch.isEmpty else { return }
        if storeLink != nil { noteHandedOver(batch, on: name, from: start) }
        guard let last = channels[name]?.count(batch) else { return }
        if storeLink == nil { acknowledgeFinished(name, through: last) }
    }

    /// With a store: notes the positions of what was just handed over (counted from `start`),
    /// until every subscriber has finished them.
    private func noteHandedOver(_ messages: [ChannelMessage], on channel: String, from start: UInt64) {
        var index = start
        var positions: [(index: UInt64, position: StreamPosition)] = []
        for message in messages {
            index += 1
            if let position = message.position { positions.append((index, position)) }
        }
        channels[channel]?.unfinished += positions
    }
}

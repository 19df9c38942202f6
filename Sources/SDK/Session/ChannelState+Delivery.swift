extension Session.ChannelState {
    /// A channel with no subscriber yet, nothing delivered (for the per-message path that
    /// `bench-instructions` counts).
    package static var empty: Self { Self() }

    /// Adds `subscriber` under `id`.
    package mutating func add(_ subscriber: Subscriber, id: UInt64) {
        subscribers[id] = subscriber
    }

    /// Holds the messages of `run` (of `bytes`, as the subscribers' byte bound counts them) for
    /// the subscribers, keeping the position of the last. A message up to ``redeliverUntil`` is
    /// flagged as coming again. `true`: the run holds the channel's first messages of the turn.
    /// In place: nothing is copied per message.
    package mutating func hold(_ run: [ChannelMessage], bytes: Int) -> Bool {
        // The channel's first messages of the turn: none held beyond those waiting for the store.
        let first = !run.isEmpty && undelivered.count == awaitingStore.last?.count ?? 0
        undeliveredBytes += bytes
        if redeliverUntil == nil, !flowControlled {
            // The usual case: the run is held as it is (the turn's first takes its array whole).
            if let last = run.last(where: { $0.position != nil })?.position { position = last }
            if undelivered.isEmpty {
                undelivered = run
            } else {
                undelivered.append(contentsOf: run)
            }
            return first
        }
        for message in run {
            if let position = message.position, !flowControlled || self.position.map({ $0.isAtOrPast(position) == true }) != true {
                self.position = position
            }
            if let until = redeliverUntil {
                // The killed launch was handed up to `until`: what comes again up to it is flagged.
                let again = message.position.map { until.isAtOrPast($0) ?? true } ?? true
                if !again || message.position == until { redeliverUntil = nil }
                var flagged = message
                flagged.isRedelivery = again || message.isRedelivery
                undelivered.append(flagged)
            } else {
                undelivered.append(message)
            }
        }
        return first
    }

    /// Takes the first `count` held messages, to be handed over, and their bytes (a share of
    /// what the held ones were counted, by number, when not all are taken).
    package mutating func takeHeld(_ count: Int) -> (messages: [ChannelMessage], bytes: Int) {
        guard count < undelivered.count else {
            defer { (undelivered, undeliveredBytes) = ([], 0) }
            return (undelivered, undeliveredBytes)
        }
        let bytes = undeliveredBytes * count / undelivered.count
        undeliveredBytes -= bytes
        defer { undelivered.removeFirst(count) }
        return (Array(undelivered.prefix(count)), bytes)
    }

    /// `batch` was handed over: counted as the channel's (``handedOver``, ``handedThrough``).
    /// The position of its last message that has one.
    package mutating func count(_ batch: [ChannelMessage]) -> StreamPosition? {
        let last = batch.last(where: { $0.position != nil })?.position
        handedOver += UInt64(batch.count)
        if let last { handedThrough = last }
        return last
    }

    /// Offers `batch` (of `bytes`: its messages' approximate size) to every subscriber:
    /// the ids of those at their bound (`limit` messages, `byteLimit` bytes), which were handed
    /// nothing.
    package func offer(_ batch: [ChannelMessage], bytes: Int, limit: Int, byteLimit: Int) -> [UInt64] {
        Self.offer(batch, bytes: bytes, to: subscribers, limit: limit, byteLimit: byteLimit)
    }

    /// Offers `batch` to `subscribers`, as ``offer(_:bytes:limit:byteLimit:)`` does.
    static func offer(_ batch: [ChannelMessage], bytes: Int, to subscribers: [UInt64: Subscriber], limit: Int, byteLimit: Int) -> [UInt64] {
        var refused: [UInt64] = []
        for (id, subscriber) in subscribers where !subscriber.offer(batch, bytes: bytes, limit: limit, byteLimit: byteLimit) {
            refused.append(id)
        }
        return refused
    }
}

extension [WireAction] {
    /// The deliveries for `subscription` from `index` on, as messages of `channel`, in one run
    /// (a read's messages for one subscription are handed over in one step); `index` moves past
    /// them.
    package func deliveryRun(of subscription: SubscriptionID, on channel: String, from index: inout Int) -> [ChannelMessage] {
        var run: [ChannelMessage] = []
        while index < endIndex, case .delivery(subscription, let data, let position) = self[index] {
            run.append(ChannelMessage(channel: channel, position: position, data: data))
            index += 1
        }
        return run
    }
}

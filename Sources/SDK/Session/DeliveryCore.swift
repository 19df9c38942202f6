// The delivery core: a turn's runs of messages held in their channels' states and, when the turn
// ends, taken for the subscribers — plain values and functions, which the session's actor calls
// and `bench-instructions` counts.

extension Session {
    /// One turn's deliveries, as plain values (no actor, no task): each run of a channel's
    /// messages held in the channel's state as it comes (``hold(_:bytes:on:in:)``), and when the
    /// turn ends without a store, every channel's held messages taken for its subscribers at once
    /// (``takeWithoutStore(from:)``). The session's actor makes these calls (`deliver`,
    /// `flushDeliveries`); `bench-instructions` makes the same ones, so its count is the
    /// session's own code, not a re-enactment of it.
    package struct TurnDeliveries {
        /// Channels holding messages of this turn, in the order their first run came
        /// (`ChannelState.undelivered`).
        package private(set) var channels: [String] = []

        package init() {}

        /// A channel's messages taken when the turn ended, for the subscribers it had then.
        package struct Batch {
            package let channel: String
            package let messages: [ChannelMessage]
            /// Their size, as the subscribers' byte bound counts it.
            package let bytes: Int
            package let subscribers: [UInt64: Subscriber]
            /// The position of the last message that has one (``ChannelState/count(_:)``).
            package let last: StreamPosition?
        }

        /// What the turn's end takes from the channels, without a store.
        package struct Taken {
            /// Every channel of the turn that the session still has, and where its stream stands
            /// (for the session's mirror).
            package var positions: [(channel: String, position: StreamPosition?)] = []
            /// The batches for the subscribers, counted as handed over.
            package var batches: [Batch] = []
            /// Channels whose subscribers are held back (flow control hands over by itself), and
            /// how many messages each holds.
            package var controlled: [(channel: String, held: Int)] = []
        }

        /// Holds `run` (of `bytes`) in `channel`'s state until the turn ends; `false` when the
        /// session no longer has the channel. In place, one lookup for the run.
        package mutating func hold(_ run: [ChannelMessage], bytes: Int, on channel: String, in states: inout [String: ChannelState]) -> Bool {
            guard let first = states[channel]?.hold(run, bytes: bytes) else { return false }
            if first { channels.append(channel) }
            return true
        }

        /// The turn ended: its channels, and none held any longer (with a store, the session
        /// hands each over once the store holds their positions).
        package mutating func takeChannels() -> [String] {
            defer { channels = [] }
            return channels
        }

        /// The turn ended without a store (nothing waits for a write): each channel's state read,
        /// its held messages taken and counted, in one lookup each. A channel let go meanwhile
        /// (its last subscriber stopped) is skipped.
        package mutating func takeWithoutStore(from states: inout [String: ChannelState]) -> Taken {
            var taken = Taken()
            taken.positions.reserveCapacity(channels.count)
            taken.batches.reserveCapacity(channels.count)
            for name in takeChannels() {
                _ = states[name]?.update { state in
                    taken.positions.append((name, state.position))
                    guard !state.undelivered.isEmpty else { return }
                    if !state.awaitingStore.isEmpty { state.awaitingStore = [] }
                    guard !state.flowControlled else { return taken.controlled.append((name, state.undelivered.count)) }
                    let (messages, bytes) = state.takeHeld(.max)
                    taken.batches.append(Batch(channel: name, messages: messages, bytes: bytes, subscribers: state.subscribers, last: state.count(messages)))
                }
            }
            return taken
        }
    }
}

extension Session.ChannelState {
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
    package static func offer(_ batch: [ChannelMessage], bytes: Int, to subscribers: [UInt64: Subscriber], limit: Int, byteLimit: Int) -> [UInt64] {
        var refused: [UInt64] = []
        for (id, subscriber) in subscribers where !subscriber.offer(batch, bytes: bytes, limit: limit, byteLimit: byteLimit) {
            refused.append(id)
        }
        return refused
    }
}

extension TetherProtocol.Machine {
    /// The frames of one read: what ``receive(_:)`` answers for each, in one array, but the
    /// messages of one subscription that come one after another go as one
    /// ``WireAction/deliveries(_:_:)``, routed once, the messages as the codec built them.
    package mutating func receive(contentsOf frames: [TransportFrame]) -> [WireAction] {
        var actions: [WireAction] = []
        var run = Run()
        for frame in frames {
            guard !gate.isEnded else { break }
            // A message as servers write it comes as the codec built it, into the run: not
            // copied out of a `ServerMessage`, nor freed again with one.
            let delivered: ChannelMessage
            if let direct = codec.channelMessage(in: frame) {
                delivered = direct
            } else {
                do {
                    switch try codec.decode(frame) {
                    case .message(let message):
                        delivered = message
                    case let other:
                        // Anything else may change the routes: the run ends before it.
                        run.end(into: &actions, routes: &channels)
                        actions += handle(other)
                        continue
                    }
                } catch {
                    run.end(into: &actions, routes: &channels)
                    actions += end(WireEnding(.error("bad frame from server: \(error)"), .retry))
                    break
                }
            }
            if !run.isOn(delivered.channel) {
                run.end(into: &actions, routes: &channels)
                // One lookup for the run; an unanswered route takes nothing (see `delivery`).
                guard let index = channels.index(forKey: delivered.channel), channels.values[index].answered else { continue }
                run.begin(index: index, channel: delivered.channel, route: channels.values[index])
            }
            // Moved into the run: passed as it was, the message was copied into the run's array
            // and the copy here destroyed (~265 instructions a message).
            run.take(consume delivered, bytes: frame.byteCount)
        }
        run.end(into: &actions, routes: &channels)
        return actions
    }

    /// The messages of one subscription read one after another, and its route as they leave
    /// it (the last sequence delivered), written back when the run ends.
    struct Run {
        var index: [String: Route].Index?
        var channel = ""
        var subscription: SubscriptionID?
        var lastDelivered: UInt64?
        var messages: [ChannelMessage] = []
        /// The frame bytes of `messages`.
        var bytes = 0

        init() {}

        /// Begins a run of `channel`'s messages (the last one ended), in place: a run made new
        /// and assigned was copied and destroyed twice, for every run (a recovery's catch-up is a
        /// thousand runs of one message).
        mutating func begin(index: [String: Route].Index, channel: String, route: Route) {
            self.index = index
            self.channel = channel
            self.subscription = route.subscription
            self.lastDelivered = route.lastDelivered
        }

        /// Indicates that a run of `channel`'s messages is under way (a short name compares
        /// as a few words).
        func isOn(_ channel: String) -> Bool { index != nil && self.channel == channel }

        /// Takes `message` (a frame of `bytes`), unless it was delivered already (at or below
        /// the last sequence).
        mutating func take(_ message: consuming ChannelMessage, bytes: Int) {
            guard Route.isNew(message.sequence, after: &lastDelivered) else { return }
            messages.append(message)
            self.bytes += bytes
        }

        /// Ends the run: its messages go as one action, the route keeps where it stopped.
        mutating func end(into actions: inout [WireAction], routes: inout [String: Route]) {
            guard let index else { return }
            routes.values[index].lastDelivered = lastDelivered
            // An answered route was claimed: it has its subscription.
            if !messages.isEmpty, let subscription { actions.append(.deliveries(subscription, messages, bytes: bytes)) }
            // Emptied in place (the messages went with the action).
            self.index = nil
            messages = []
            bytes = 0
        }
    }

    /// One frame's message (``receive(_:)``): its delivery, unless its route is unanswered or it
    /// was delivered already.
    mutating func delivery(of message: ChannelMessage) -> WireAction? {
        // One lookup per message: the route is read and changed in place.
        guard let index = channels.index(forKey: message.channel), channels.values[index].answered else { return nil }
        guard let subscription = channels.values[index].subscription else { return nil }
        guard Route.isNew(message.sequence, after: &channels.values[index].lastDelivered) else { return nil }
        return .delivery(subscription, message.data, position: message.position)
    }
}

extension Session.ChannelState {
    /// A channel with no subscriber yet, nothing delivered (for the per-message path that
    /// `bench-instructions` counts).
    package static var empty: Self { Self() }

    /// Adds `subscriber` under `id`.
    package mutating func add(_ subscriber: Subscriber, id: UInt64) {
        subscribers[id] = subscriber
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

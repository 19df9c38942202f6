extension Session {
    /// Where the channels stand on one socket: each subscribe sent and not answered yet, and each
    /// subscription the protocol confirmed. It lives in the socket's ``Connection``, so letting
    /// the socket go forgets it whole; each fact is kept in both directions here and only here.
    struct SocketChannels {
        /// The channel of every subscribe sent on this socket and not answered yet.
        private(set) var pending: [RequestID: String] = [:]
        private var pendingByChannel: [String: RequestID] = [:]
        /// The channel of every subscription the protocol confirmed on this socket.
        private var confirmed: [SubscriptionID: String] = [:]
        private var confirmedByChannel: [String: SubscriptionID] = [:]

        /// Room for `count` more subscriptions (a replay's), so the tables do not grow step by step.
        mutating func reserveCapacity(_ count: Int) {
            pending.reserveCapacity(pending.count + count)
            pendingByChannel.reserveCapacity(pendingByChannel.count + count)
            confirmed.reserveCapacity(confirmed.count + count)
            confirmedByChannel.reserveCapacity(confirmedByChannel.count + count)
        }

        /// A subscribe for `channel` went out as request `id`.
        mutating func sent(_ id: RequestID, for channel: String) {
            if let earlier = pendingByChannel.updateValue(id, forKey: channel) { pending[earlier] = nil }
            pending[id] = channel
        }

        /// The subscribe `id` was answered (either way): its channel, if it was pending.
        mutating func answered(_ id: RequestID) -> String? {
            guard let channel = pending.removeValue(forKey: id) else { return nil }
            if let index = pendingByChannel.index(forKey: channel), pendingByChannel.values[index] == id { pendingByChannel.remove(at: index) }
            return channel
        }

        /// The subscribe of `channel` in flight on this socket.
        func pendingRequest(of channel: String) -> RequestID? { pendingByChannel[channel] }

        /// The protocol confirmed subscription `id` (the request that made it) for `channel`.
        mutating func confirm(_ id: SubscriptionID, for channel: String) {
            if let earlier = confirmedByChannel.updateValue(id, forKey: channel), earlier != id { confirmed[earlier] = nil }
            confirmed[id] = channel
        }

        /// The confirmed subscription `id` is gone: its channel.
        mutating func unconfirm(_ id: SubscriptionID) -> String? {
            guard let channel = confirmed.removeValue(forKey: id) else { return nil }
            if confirmedByChannel[channel] == id { confirmedByChannel[channel] = nil }
            return channel
        }

        /// The channel of the confirmed subscription `id`.
        func channel(of id: SubscriptionID) -> String? { confirmed[id] }
        /// The subscription the server made for `channel` on this socket, if any.
        func subscription(of channel: String) -> SubscriptionID? { confirmedByChannel[channel] }

        /// Indicates that the protocol confirmed a subscription of `channel` on this socket.
        func isActive(_ channel: String) -> Bool { confirmedByChannel[channel] != nil }

        /// Indicates that `channel` is subscribed on this socket or its subscribe is on the way.
        func isJoinedOrJoining(_ channel: String) -> Bool { isActive(channel) || pendingByChannel[channel] != nil }

        /// Forgets `channel` on this socket: the subscribe in flight (its timeout is the caller's to
        /// cancel) and the subscription that stands for it, pending or confirmed, to leave.
        mutating func forget(_ channel: String) -> (pending: RequestID?, subscription: SubscriptionID?) {
            let request = pendingByChannel.removeValue(forKey: channel)
            if let request { pending[request] = nil }
            let subscription = confirmedByChannel.removeValue(forKey: channel)
            if let subscription { confirmed[subscription] = nil }
            return (request, request ?? subscription)
        }

        /// Forgets every subscribe in flight (the session ends): their ids.
        mutating func forgetPending() -> [RequestID] {
            defer {
                pending = [:]
                pendingByChannel = [:]
            }
            return Array(pending.keys)
        }
    }
}

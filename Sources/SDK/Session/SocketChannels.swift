extension Session {
    /// Where the channels stand on one socket: each subscribe sent and not answered yet, and each
    /// subscription the protocol confirmed. It lives in the socket's ``Connection``, so letting
    /// the socket go forgets it whole; each fact is kept in both directions here and only here.
    package struct SocketChannels {
        /// The channel of every subscribe sent on this socket and not answered yet.
        private(set) var pending: [RequestID: String] = [:]
        /// The channel of every subscription the protocol confirmed on this socket.
        private var confirmed: [SubscriptionID: String] = [:]
        /// Each channel's subscribe in flight and confirmed subscription, in one entry: a
        /// subscribe's answer changes the entry in place (two tables by channel took a removal
        /// from one and an insertion into the other, for every subscription of a recovery). An
        /// entry with neither stays until the channel is forgotten.
        private var byChannel: [String: Requests] = [:]

        private struct Requests {
            var pending: RequestID?
            var confirmed: SubscriptionID?
        }

        /// Sets `value` to `new` (in place, through one lookup), and gives back what it held.
        private static func exchange<Value>(_ value: inout Value?, with new: Value) -> Value? {
            defer { value = new }
            return value
        }

        package init() {}

        /// Room for `count` more subscriptions (a replay's), so the tables do not grow step by step.
        mutating func reserveCapacity(_ count: Int) {
            pending.reserveCapacity(pending.count + count)
            confirmed.reserveCapacity(confirmed.count + count)
            byChannel.reserveCapacity(byChannel.count + count)
        }

        /// A subscribe for `channel` went out as request `id`.
        mutating func sent(_ id: RequestID, for channel: String) {
            let earlier = Self.exchange(&byChannel[channel, default: Requests()].pending, with: id)
            if let earlier { pending[earlier] = nil }
            pending[id] = channel
        }

        /// The subscribe `id` was answered (either way): its channel, if it was pending.
        mutating func answered(_ id: RequestID) -> String? {
            guard let channel = pending.removeValue(forKey: id) else { return nil }
            if let index = byChannel.index(forKey: channel), byChannel.values[index].pending == id { byChannel.values[index].pending = nil }
            return channel
        }

        /// The subscribe of `channel` in flight on this socket.
        func pendingRequest(of channel: String) -> RequestID? { byChannel[channel]?.pending }

        /// The protocol confirmed subscription `id` (the request that made it) for `channel`.
        package mutating func confirm(_ id: SubscriptionID, for channel: String) {
            if let earlier = Self.exchange(&byChannel[channel, default: Requests()].confirmed, with: id), earlier != id { confirmed[earlier] = nil }
            confirmed[id] = channel
        }

        /// The confirmed subscription `id` is gone: its channel.
        mutating func unconfirm(_ id: SubscriptionID) -> String? {
            guard let channel = confirmed.removeValue(forKey: id) else { return nil }
            if let index = byChannel.index(forKey: channel), byChannel.values[index].confirmed == id { byChannel.values[index].confirmed = nil }
            return channel
        }

        /// The channel of the confirmed subscription `id`.
        package func channel(of id: SubscriptionID) -> String? { confirmed[id] }
        /// The subscription the server made for `channel` on this socket, if any.
        func subscription(of channel: String) -> SubscriptionID? { byChannel[channel]?.confirmed }

        /// Indicates that the protocol confirmed a subscription of `channel` on this socket.
        func isActive(_ channel: String) -> Bool { subscription(of: channel) != nil }

        /// Indicates that `channel` is subscribed on this socket or its subscribe is on the way.
        func isJoinedOrJoining(_ channel: String) -> Bool { byChannel[channel].map { $0.confirmed != nil || $0.pending != nil } ?? false }

        /// Forgets `channel` on this socket: the subscribe in flight (its timeout is the caller's to
        /// cancel) and the subscription that stands for it, pending or confirmed, to leave.
        mutating func forget(_ channel: String) -> (pending: RequestID?, subscription: SubscriptionID?) {
            let entry = byChannel.removeValue(forKey: channel)
            let request = entry?.pending
            if let request { pending[request] = nil }
            let subscription = entry?.confirmed
            if let subscription { confirmed[subscription] = nil }
            return (request, request ?? subscription)
        }

        /// Forgets every subscribe in flight (the session ends): their ids.
        mutating func forgetPending() -> [RequestID] {
            defer {
                for channel in pending.values { byChannel[channel]?.pending = nil }
                pending = [:]
            }
            return Array(pending.keys)
        }
    }
}

// The routes of Tether's protocol machine: where a channel's messages go, how a subscribe's
// answer changes them, and the duplicate rule they apply.

extension TetherProtocol.Machine {
    /// What a channel's messages go to: its subscription, and the last sequence number it
    /// delivered (or resumed after) — one at or below it is a duplicate, dropped here.
    struct Route {
        /// Nil while the upgrade carried the channel and the core has not claimed it.
        var subscription: SubscriptionID?
        var lastDelivered: UInt64?
        /// Its `ok` came. The server sends a subscription's messages after its `ok`: one for
        /// the channel before it is an earlier subscription's, still on the way (the channel
        /// was left and subscribed again), dropped here — counted, it would make the catch-up
        /// that follows the `ok` look like duplicates.
        var answered = false
        /// The `ok`'s `seq`: where the server counts this subscription's positions from in a
        /// version-3 resume set.
        var base: UInt64?
        /// The wire id of the subscribe the upgrade carried for the channel: the core's
        /// subscribe claims it (while `pending` holds it as carried) in the one lookup that
        /// finds the route. A table of carried names beside the routes hashed each name twice
        /// more (at the upgrade and at the claim).
        var carried: RequestID?
    }

    /// A subscribe's answer (an `ok`, or a resumed set's member): the route answered from `latest`.
    mutating func subscribeAnswered(_ subscription: SubscriptionID, resumed: Bool, latest: UInt64?, gap: Bool) -> WireAction {
        // One lookup: the route is read and changed in place.
        if let channel = subscriptions[subscription], let index = channels.index(forKey: channel), channels.values[index].subscription == subscription {
            channels.values[index].answered = true
            channels.values[index].base = latest
            if let latest, channels.values[index].lastDelivered.map({ latest < $0 }) ?? true {
                // Live from the server's latest; or a server whose latest is below what
                // was delivered lost its history (a restart): its numbering starts over.
                channels.values[index].lastDelivered = latest
            }
        }
        let position = latest.map(StreamPosition.sequence)
        return .subscribed(subscription, !resumed ? .live(at: position) : gap ? .gap(at: position) : .caughtUp(to: position))
    }

    /// The core let `subscription` go: so does its route, unless a later subscribe of the
    /// channel replaced it.
    mutating func forget(_ subscription: SubscriptionID) {
        guard let channel = subscriptions.removeValue(forKey: subscription) else { return }
        if channels[channel]?.subscription == subscription { channels[channel] = nil }
    }

    /// The upgrade carried `channel` and the core never claimed it: its route goes.
    mutating func dropUnclaimed(_ channel: String) {
        if let index = channels.index(forKey: channel), channels.values[index].subscription == nil { channels.remove(at: index) }
    }
}

extension TetherProtocol.Machine.Route {
    /// The duplicate rule, for a frame alone and for a read's runs alike: a message numbered at
    /// or below the last one delivered was delivered already; a new one becomes the last. A
    /// message without a number is always new.
    static func isNew(_ sequence: UInt64?, after last: inout UInt64?) -> Bool {
        guard let sequence else { return true }
        if let delivered = last, sequence <= delivered { return false }
        last = sequence
        return true
    }
}

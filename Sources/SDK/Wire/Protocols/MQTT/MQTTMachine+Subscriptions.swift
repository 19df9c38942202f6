import ConnectionPolicy
import Foundation

extension MQTT.Machine {
    mutating func subscribe(_ id: SubscriptionID, _ topic: Topic, resume: StreamPosition?) -> [WireAction] {
        let filter = topic.name
        guard MQTTTopicFilter.isValid(filter: filter) else {
            return [.subscriptionFailed(id, WireFailure(code: "invalid_filter", message: "'\(filter)' is not an MQTT topic filter (+ and # stand for whole levels, # only last)"))]
        }
        var qos = configuration.qos
        if let requested = topic.options?["qos"]?.integerValue {
            guard let value = UInt8(exactly: requested).flatMap(MQTTQoS.init(rawValue:)) else {
                return [.subscriptionFailed(id, WireFailure(code: "invalid_qos", message: "QoS \(requested) is not offered (0 or 1)"))]
            }
            qos = value
        }
        let position = resume?.sequence ?? 0
        if sessionPresent, state.brokerFilters[filter] == qos {
            // The broker's session still holds it: nothing to send. What it queued arrives on
            // its own; the subscription is made once that backlog is in.
            add(id, Subscription(filter: filter, qos: qos, position: position, stage: catchingUp ? .claimed : .active, resumed: resume != nil))
            return catchingUp ? [] : [.subscribed(id, resume == nil ? .live(at: .sequence(position)) : .caughtUp(to: .sequence(position)))]
        }
        guard let packetID = state.allocatePacketID(excluding: packetIDsInUse) else {
            return [.subscriptionFailed(id, WireFailure(code: "no_packet_id", message: "all 65,535 MQTT packet ids are in use"))]
        }
        pendingSubscribes[packetID] = id
        add(id, Subscription(filter: filter, qos: qos, position: position, stage: .pending(packetID), resumed: resume != nil))
        return [send(.subscribe(packetID, [(filter, qos)]))]
    }

    mutating func unsubscribe(_ id: SubscriptionID) -> [WireAction] {
        guard let subscription = subscriptions.removeValue(forKey: id) else { return [] }
        subscriptionOrder.removeAll { $0 == id }
        if case .pending(let packetID) = subscription.stage { pendingSubscribes[packetID] = nil }
        finishedThrough[id] = nil
        var actions = releaseHeld()
        // The broker holds one subscription per filter: another of the session's on the same
        // filter (a subscribe sent again after this one timed out) keeps it.
        guard !subscriptions.values.contains(where: { $0.filter == subscription.filter }) else { return actions }
        state.brokerFilters[subscription.filter] = nil
        guard let packetID = state.allocatePacketID(excluding: packetIDsInUse) else { return actions }
        pendingUnsubscribes[packetID] = subscription.filter
        actions.append(send(.unsubscribe(packetID, [subscription.filter])))
        return actions
    }

    mutating func subscribeAnswered(_ packetID: UInt16, code: UInt8) -> [WireAction] {
        guard let id = pendingSubscribes.removeValue(forKey: packetID), var subscription = subscriptions[id] else { return [] }
        guard code < 0x80, let granted = MQTTQoS(rawValue: code) else {
            subscriptions[id] = nil
            subscriptionOrder.removeAll { $0 == id }
            let failure = WireFailure(code: "mqtt_0x\(String(code, radix: 16))", message: "the broker refused the subscription to '\(subscription.filter)' (SUBACK 0x\(String(code, radix: 16)))")
            return [.subscriptionFailed(id, failure)] + releaseHeld()
        }
        subscription.stage = .active
        subscriptions[id] = subscription
        if configuration.persistentSession { state.brokerFilters[subscription.filter] = granted }
        // A subscription the broker did not still hold: what was published meanwhile is gone.
        // Positions number this subscription's deliveries: a new one starts at 0.
        let outcome: SubscribeOutcome = subscription.resumed ? .resumeUnsupported : .live(at: .sequence(subscription.position))
        return [.subscribed(id, outcome)] + releaseHeld()
    }

    /// The broker's backlog for a resumed session is in: the subscriptions it held are made,
    /// caught up to what it queued; filters it held that no subscription claimed are dropped.
    mutating func backlogDone() -> [WireAction] {
        guard catchingUp else { return [] }
        catchingUp = false
        var actions: [WireAction] = []
        var claimed: Set<String> = []
        for id in subscriptionOrder {
            guard var subscription = subscriptions[id], subscription.stage == .claimed else { continue }
            claimed.insert(subscription.filter)
            let queued = held.count { MQTTTopicFilter.matches(subscription.filter, topic: $0.publish.topic) && !$0.deliveredTo.contains(id) }
            subscription.stage = .active
            subscriptions[id] = subscription
            let outcome: SubscribeOutcome = subscription.resumed ? .caughtUp(to: .sequence(subscription.position + UInt64(queued))) : .live(at: .sequence(subscription.position))
            actions.append(.subscribed(id, outcome))
        }
        for filter in state.brokerFilters.keys.sorted() where !claimed.contains(filter) && !subscriptions.values.contains(where: { $0.filter == filter }) {
            // The app let go of it while away: the broker's session should too.
            state.brokerFilters[filter] = nil
            guard let packetID = state.allocatePacketID(excluding: packetIDsInUse) else { continue }
            pendingUnsubscribes[packetID] = filter
            actions.append(send(.unsubscribe(packetID, [filter])))
        }
        return actions + releaseHeld()
    }

    private mutating func add(_ id: SubscriptionID, _ subscription: Subscription) {
        if subscriptions.updateValue(subscription, forKey: id) == nil { subscriptionOrder.append(id) }
        // What came before it was finished (or never this subscription's) — but for what an
        // earlier socket of this process delivered and is not acknowledged yet: the core says
        // when the app has finished it.
        let unfinished = state.delivered.values.compactMap { $0.positions[subscription.filter] }.min()
        finishedThrough[id] = unfinished.map { min(subscription.position, $0 - 1) } ?? subscription.position
    }
}

import ConnectionPolicy
import Foundation

extension MQTT.Machine {
    /// A message from the broker: delivered to every made subscription whose filter matches,
    /// held for the ones still being made, and acknowledged (QoS 1) once the app has finished it
    /// on all of them — so that a broker's persistent session brings again what an app killed
    /// before it finished had been handed.
    mutating func received(_ publish: MQTTPublish) -> [WireAction] {
        if let id = publish.packetID {
            if publish.duplicate, state.acknowledged[id] == MQTTSessionState.digest(publish) {
                // A re-send of one already delivered and acknowledged (its PUBACK was lost).
                return [send(.puback(id, code: 0))]
            }
            state.acknowledged[id] = nil
            if !publish.duplicate { state.delivered[id] = nil }
        }
        held.append(Held(publish: publish))
        if held.count > Self.heldLimit, catchingUp { return backlogDone() }
        return releaseHeld()
    }

    /// Delivers what the made subscriptions have not had yet, and acknowledges every message
    /// that waits for nothing more — in arrival order.
    mutating func releaseHeld() -> [WireAction] {
        var actions: [WireAction] = []
        var remaining: [Held] = []
        for var message in held {
            var waiting = false
            for id in subscriptionOrder where !message.deliveredTo.contains(id) {
                guard var subscription = subscriptions[id], MQTTTopicFilter.matches(subscription.filter, topic: message.publish.topic) else { continue }
                guard subscription.stage == .active else {
                    waiting = true
                    continue
                }
                message.deliveredTo.insert(id)
                if let earlier = state.earlierDelivery(of: message.publish, on: subscription.filter) {
                    // An earlier socket of this process delivered it: the core holds it still.
                    message.positions[id] = earlier
                    continue
                }
                subscription.position += 1
                subscriptions[id] = subscription
                message.positions[id] = subscription.position
                // One the broker sent before (DUP: the app may have been handed it, then killed).
                let data = Self.data(of: message.publish), position = StreamPosition.sequence(subscription.position)
                actions.append(message.publish.duplicate ? .redelivery(id, data, position: position) : .delivery(id, data, position: position))
            }
            // Until a resumed session's backlog is in, a message no subscription claims yet may
            // belong to one the replay has still to make.
            if waiting || (catchingUp && message.deliveredTo.isEmpty) {
                remaining.append(message)
                continue
            }
            if let id = message.publish.packetID {
                // Delivered: a re-send of it (DUP) on a later socket is not delivered again.
                let filters = message.positions.compactMap { id, position in subscriptions[id].map { ($0.filter, position) } }
                let digest = MQTTSessionState.digest(message.publish)
                state.delivered[id] = MQTTSessionState.Delivered(digest: digest, positions: Dictionary(filters) { max($0, $1) })
                unacknowledged.append(Unacknowledged(packetID: id, digest: digest, positions: message.positions))
            }
        }
        held = remaining
        return actions + acknowledgeFinished()
    }

    /// The app finished subscription `id` through `position`.
    mutating func finished(_ id: SubscriptionID, through position: StreamPosition) -> [WireAction] {
        guard let count = position.sequence, subscriptions[id] != nil else { return [] }
        finishedThrough[id] = max(finishedThrough[id] ?? 0, count)
        return acknowledgeFinished()
    }

    /// Acknowledges, in arrival order, the delivered messages the app has finished on every
    /// subscription that still holds them (one let go of has nothing left to finish).
    mutating func acknowledgeFinished() -> [WireAction] {
        let done = unacknowledged.prefix { message in
            message.positions.allSatisfy { id, position in subscriptions[id] == nil || (finishedThrough[id] ?? 0) >= position }
        }.count
        guard done > 0 else { return [] }
        var actions: [WireAction] = []
        for message in unacknowledged.prefix(done) {
            state.acknowledged(message.packetID, digest: message.digest)
            actions.append(send(.puback(message.packetID, code: 0)))
        }
        unacknowledged.removeFirst(done)
        return actions
    }

    mutating func publish(_ request: RequestID, topic: String, data: JSONValue, key: String?) -> [WireAction] {
        guard MQTTTopicFilter.isValid(topic: topic) else {
            return [.replied(request, .failure(WireFailure(code: "invalid_topic", message: "'\(topic)' is not an MQTT topic name (no + or #)")))]
        }
        let payload = Array(JSONWriter.text(data).utf8)
        guard configuration.qos == .atLeastOnce else {
            return [send(.publish(MQTTPublish(topic: topic, payload: payload, qos: .atMostOnce))), .replied(request, .success(.sentUnconfirmed))]
        }
        var duplicate = false
        var packetID: UInt16
        if let key, let earlier = state.packetID(resending: key), !publishes.keys.contains(earlier) {
            duplicate = true
            packetID = earlier
        } else {
            guard let fresh = state.allocatePacketID(excluding: packetIDsInUse) else {
                return [.replied(request, .failure(WireFailure(code: "no_packet_id", message: "all 65,535 MQTT packet ids are in use")))]
            }
            packetID = fresh
            if let key { state.remember(key, packetID: fresh) }
        }
        publishes[packetID] = request
        return [send(.publish(MQTTPublish(topic: topic, payload: payload, qos: .atLeastOnce, duplicate: duplicate, packetID: packetID)))]
    }

    /// What the app receives: `{"topic", "payload"}` — the payload as JSON when it is JSON text,
    /// as a string when it is other UTF-8 text, or `{"topic", "payloadBase64"}` for other bytes;
    /// `"retained": true` for a retained message.
    static func data(of publish: MQTTPublish) -> JSONValue {
        var message: [String: JSONValue] = ["topic": .string(publish.topic)]
        if let value = try? JSONParser.parse(publish.payload, maxDepth: 64) {
            message["payload"] = value
        } else {
            let text = String(decoding: publish.payload, as: UTF8.self)
            if text.utf8.elementsEqual(publish.payload) {
                message["payload"] = .string(text)
            } else {
                message["payloadBase64"] = .string(Data(publish.payload).base64EncodedString())
            }
        }
        if publish.retain { message["retained"] = true }
        return .object(message)
    }
}

import ConnectionPolicy
import Foundation

extension PhoenixChannels.Machine {
    package mutating func receive(_ frame: TransportFrame) -> [WireAction] {
        guard !ended else { return [] }
        let message: PhoenixMessage
        do {
            message = try PhoenixMessage.decode(frame)
        } catch {
            return end(WireEnding(.error(error.description), .retry, closeCode: .protocolError))
        }
        if message.event == PhoenixMessage.Event.reply { return reply(message) }
        guard message.topic != PhoenixMessage.Event.socketTopic else { return [] }
        return channelMessage(message)
    }

    // MARK: Replies

    private mutating func reply(_ message: PhoenixMessage) -> [WireAction] {
        // A reply to nothing awaited (a leave's after the topic was let go, a superseded join's,
        // a push already counted unconfirmed) changes nothing.
        guard let ref = message.ref, let waiting = pending.removeValue(forKey: ref) else { return [] }
        let (status, response) = Self.status(of: message)
        switch waiting {
        case .keepAlive:
            if keepAliveRef == ref { keepAliveRef = nil }
            return []
        case .ping(let request):
            return [.replied(request, .success(.acknowledged(position: nil, payload: nil)))]
        case .leave:
            return []
        case .push(let request):
            let cancel = WireAction.cancel(Self.replyTimer(ref))
            guard status == "ok" else { return [cancel, .replied(request, .failure(Self.failure(status, response)))] }
            return [cancel, .replied(request, .success(.acknowledged(position: nil, payload: response)))]
        case .join(let wire, let joinRef):
            guard var joined = topics[wire], joined.joinRef == joinRef else { return [] }
            guard status == "ok" else {
                topics[wire] = nil
                wireTopics[joined.subscription] = nil
                return [.cancel(Self.rejoinTimer(wire)), .subscriptionFailed(joined.subscription, Self.failure(status, response))]
            }
            joined.bindings = Self.bindings(in: response)
            switch joined.phase {
            case .joining(let resumed, let replay):
                if replay, joined.replay != nil {
                    // The replayed broadcasts follow, with no end marker: the rejoin is reported
                    // once the replay is over (``finishReplay(_:)``).
                    joined.replay?.started = true
                    topics[wire] = joined
                    return [.arm(Self.replayEndTimer(wire), after: configuration.replyTimeout)]
                }
                let held = joined.held
                joined.held = []
                joined.phase = .joined
                topics[wire] = joined
                let outcome: SubscribeOutcome
                if !resumed {
                    // A replayable channel starts its positions now: a replay after a drop
                    // asks from here even if nothing came meanwhile.
                    outcome = .live(at: replayable(joined.topic) ? .timestamp(milliseconds: configuration.supabase!.now()) : nil)
                } else {
                    outcome = .resumeUnsupported
                }
                return [.subscribed(joined.subscription, outcome)] + held
            case .rejoining, .errored, .awaitingToken:
                joined.phase = .joined
                topics[wire] = joined
                return [.cancel(Self.rejoinTimer(wire))]
            case .joined:
                return []
            }
        }
    }

    /// A reply's status and response (a binary reply's response as `{"binary": base64}`).
    static func status(of message: PhoenixMessage) -> (String, JSONValue?) {
        switch message.payload {
        case .json(let payload): (payload["status"]?.stringValue ?? "", payload["response"])
        case .binaryReply(let status, let response): (status, ["binary": .string(Data(response).base64EncodedString())])
        case .binary(let bytes): ("", ["binary": .string(Data(bytes).base64EncodedString())])
        }
    }

    static func failure(_ status: String, _ response: JSONValue?) -> WireFailure {
        let reason = response?["reason"]?.stringValue ?? (status.isEmpty ? "a reply without a status" : "status \(status)")
        return WireFailure(code: status.isEmpty ? "error" : status, message: reason, payload: response)
    }

    // MARK: A topic's messages

    private mutating func channelMessage(_ message: PhoenixMessage) -> [WireAction] {
        // A topic not joined (left, or never): its late messages are dropped; so are those of
        // an earlier join of it (a stale join_ref).
        guard let joined = topics[message.topic] else { return [] }
        if let joinRef = message.joinRef, joinRef != joined.joinRef { return [] }
        let payload: JSONValue
        switch message.payload {
        case .json(let value): payload = value
        case .binary(let bytes), .binaryReply(_, let bytes): payload = ["binary": .string(Data(bytes).base64EncodedString())]
        }
        // A replay ends at the channel's first frame that is not a replayed broadcast.
        let replayed = message.event == "broadcast" && payload["meta"]?["replayed"]?.boolValue == true
        let ending = joined.replay?.started == true && !replayed ? finishReplay(message.topic) : []
        return ending + channelMessage(message, payload: payload, replayed: replayed)
    }

    private mutating func channelMessage(_ message: PhoenixMessage, payload: JSONValue, replayed: Bool) -> [WireAction] {
        guard var joined = topics[message.topic] else { return [] }
        let wire = message.topic
        switch message.event {
        case PhoenixMessage.Event.error:
            // The channel crashed; the socket stays. Rejoin with backoff; the app hears it (what
            // was published until the rejoin is unknown).
            let tries: Int
            switch joined.phase {
            case .errored, .rejoining, .awaitingToken: return []
            case .joining: return failJoining(wire, joined, WireFailure(code: "phx_error", message: "the channel crashed while joining"))
            case .joined: tries = 0
            }
            joined.phase = .errored(tries: tries)
            joined.presence.rejoined()
            topics[wire] = joined
            return [.arm(Self.rejoinTimer(wire), after: Self.rejoinDelay(afterFailures: tries)),
                    .delivery(joined.subscription, ["event": .string(PhoenixMessage.Event.error), "payload": payload], position: nil)]
        case PhoenixMessage.Event.close:
            return channelClosed(wire, joined)
        case "presence_state":
            let view = joined.presence.state(payload)
            topics[wire] = joined
            return deliver(presence: view, on: wire)
        case "presence_diff":
            let view = joined.presence.diff(payload)
            topics[wire] = joined
            return view.map { deliver(presence: $0, on: wire) } ?? []
        default:
            var position: StreamPosition?
            if configuration.supabase != nil {
                switch message.event {
                case "system" where payload["status"]?.stringValue == "error":
                    let text = payload["message"]?.stringValue ?? "a system error"
                    if payload["extension"]?.stringValue == "postgres_changes" {
                        // Repeated every few seconds while the channel stays joined: said once.
                        guard topics[wire]?.surfacedErrors.insert(text).inserted == true else { return [] }
                    } else {
                        topics[wire]?.systemError = text
                    }
                case "postgres_changes":
                    guard Self.wants(payload, bindings: joined.bindings) else { return [] }
                case "broadcast" where replayable(joined.topic):
                    // A replay can repeat what was delivered (its `since` reaches back): by id.
                    let id = payload["meta"]?["id"]?.stringValue
                    if replayed { noteReplayed(id: id, on: wire) }
                    if id == nil, !replayed { session.noteClientBroadcast(on: wire) }
                    let now = configuration.supabase!.now()
                    if let id, !session.remember(id, on: wire, at: now) {
                        // Delivered before: dropped — unless it was delivered after where the
                        // core resumed (a relaunch: the app had not finished it), then again,
                        // flagged, at its position.
                        guard replayed, let at = session.deliveredAt(id, on: wire), let from = joined.resumedFrom, at > from else { return [] }
                        return deliver(["event": .string(message.event), "payload": payload], position: .timestamp(milliseconds: at), on: wire, again: true)
                    }
                    position = .timestamp(milliseconds: now)
                default:
                    break
                }
            }
            return deliver(["event": .string(message.event), "payload": payload], position: position, on: wire)
        }
    }

    /// The server closed the channel (`phx_close`). After Supabase's message-rate error it is
    /// rejoined with backoff; after its token-expiry error, with a fresh token from the provider;
    /// otherwise the subscription ends, with the `system` error's message when one came.
    private mutating func channelClosed(_ wire: String, _ joined: Joined) -> [WireAction] {
        var joined = joined
        if case .joining = joined.phase {
            return failJoining(wire, joined, WireFailure(code: "phx_close", message: joined.systemError ?? "the channel closed while joining"))
        }
        if let error = joined.systemError, Self.isRateLimit(error) {
            joined.rateLimited += 1
            joined.systemError = nil
            joined.phase = .errored(tries: joined.rateLimited - 1)
            joined.presence.rejoined()
            topics[wire] = joined
            return [.arm(Self.rejoinTimer(wire), after: Self.rejoinDelay(afterFailures: joined.rateLimited - 1))]
        }
        if let error = joined.systemError, Self.isTokenExpiry(error) {
            joined.phase = .awaitingToken
            joined.presence.rejoined()
            topics[wire] = joined
            return requestCredentials()
        }
        topics[wire] = nil
        wireTopics[joined.subscription] = nil
        let reason = joined.systemError.map { "the channel closed: \($0)" } ?? "the server closed the channel (phx_close)"
        return [.cancel(Self.rejoinTimer(wire)), .subscriptionEnded(joined.subscription, reason: reason)]
    }

    private mutating func failJoining(_ wire: String, _ joined: Joined, _ failure: WireFailure) -> [WireAction] {
        topics[wire] = nil
        wireTopics[joined.subscription] = nil
        pending = pending.filter { $0.value != .join(topic: wire, joinRef: joined.joinRef) }
        return [.subscriptionFailed(joined.subscription, failure)]
    }

    private mutating func deliver(presence view: PresenceView, on wire: String) -> [WireAction] {
        deliver(["event": "presence", "payload": view.json], position: nil, on: wire)
    }

    /// Delivers to the topic's subscription; before its first join's reply, holds it for then.
    private mutating func deliver(_ data: JSONValue, position: StreamPosition?, on wire: String, again: Bool = false) -> [WireAction] {
        guard let joined = topics[wire] else { return [] }
        let action = again ? WireAction.redelivery(joined.subscription, data, position: position) : .delivery(joined.subscription, data, position: position)
        if case .joining = joined.phase {
            topics[wire]?.held.append(action)
            return []
        }
        return [action]
    }

    // MARK: Join payloads

    func joinPayload(_ topic: Topic, replay: JSONValue?) -> JSONValue {
        guard let supabase = configuration.supabase else { return topic.options?.objectValue.map(JSONValue.object) ?? [:] }
        return SupabaseChannel.joinPayload(topic, accessToken: credentials?.revealedValue ?? supabase.apiKey, replay: replay)
    }

    /// Indicates that the topic's broadcasts can be replayed (a private Supabase channel asking
    /// for replay).
    func replayable(_ topic: Topic) -> Bool {
        configuration.supabase != nil && SupabaseChannel.replayLimit(topic) != nil
    }

    /// The `replay` a resubscribe asks for: from the last position, less the margin.
    func replayRequest(_ topic: Topic, resume: StreamPosition) -> JSONValue? {
        guard let supabase = configuration.supabase, let limit = SupabaseChannel.replayLimit(topic),
              let milliseconds = resume.milliseconds else { return nil }
        let margin = supabase.replayMargin.components
        let since = max(0, milliseconds - margin.seconds * 1000 - margin.attoseconds / 1_000_000_000_000_000)
        return ["since": JSONValue(since), "limit": JSONValue(limit)]
    }
}

import ConnectionPolicy

extension PhoenixChannels {
    /// One socket's Phoenix state: the topics joined and their `join_ref`s, the replies awaited
    /// (a heartbeat awaited never outlives its socket: SwiftPhoenixClient PR #117's bug).
    package struct Machine: WireMachine {
        /// What a reply answers.
        enum Pending: Hashable, Sendable {
            case join(topic: String, joinRef: String)
            case leave
            case push(RequestID)
            case ping(RequestID)
            case keepAlive
        }

        /// Where a joined topic stands.
        enum Phase: Hashable, Sendable {
            /// The first join on this socket, awaiting its reply (`resumed`: a resubscribe).
            case joining(resumed: Bool, replay: Bool)
            case joined
            /// The channel crashed (`phx_error`): a rejoin is armed; `tries` rejoins failed so far.
            case errored(tries: Int)
            /// A rejoin awaits its reply.
            case rejoining(tries: Int)
            /// Supabase closed the channel for an expired token: it rejoins once the token
            /// provider gives a fresh one.
            case awaitingToken
        }

        /// A topic joined on this socket.
        struct Joined: Sendable {
            let subscription: SubscriptionID
            let topic: Topic
            var joinRef: String
            var phase: Phase
            /// Messages that came before the first join's reply (or during a replay), delivered
            /// after it.
            var held: [WireAction] = []
            var presence = PresenceSync()
            /// A Supabase `system` error of the channel itself, the reason when it then closes.
            var systemError: String?
            /// A Supabase replay under way (see ``ReplayWatch``).
            var replay: ReplayWatch?
            /// The presence state this client announces (Supabase `track`), again after every join.
            var tracked: JSONValue?
            /// The app's track or untrack call made while the topic was not joined: answered
            /// once the join's announcement is.
            var trackRequest: RequestID?
            /// The `postgres_changes` bindings the join's reply named: id → event (`*`,
            /// `INSERT`…). `nil`: the reply named none (every change is delivered).
            var bindings: [Int64: String]?
            /// The `postgres_changes` errors already delivered (the server repeats them).
            var surfacedErrors: Set<String> = []
            /// How many times the server closed the channel for its message rate.
            var rateLimited = 0
            /// Where the core asked the join to resume from (Supabase: a timestamp): a replayed
            /// broadcast delivered before, at a later position, comes again flagged — the app
            /// had not finished it when it was killed.
            var resumedFrom: Int64?
        }

        /// Supabase replays the *last* `limit` stored broadcasts since the time asked, oldest
        /// first, after the join's reply and before `presence_state`, with no end marker. The
        /// time asked reaches back past the last broadcast delivered: the replay reached back
        /// (missed nothing) when that broadcast is among the ones it brings. Decided when the
        /// replay is over — the channel's first frame that is not a replayed broadcast, or
        /// ``PhoenixChannels/replyTimeout`` after the reply — and only then is the rejoin reported.
        struct ReplayWatch: Hashable, Sendable {
            let limit: Int
            /// The id of the last broadcast delivered before the drop (`nil`: nothing to reach).
            let lastDelivered: String?
            /// The join's reply came: the replay is under way.
            var started = false
            var count = 0
            var reachedBack = false
        }

        let configuration: PhoenixChannels
        var ended = false
        var credentials: Secret?
        /// A ``WireAction/credentialsNeeded`` awaits its answer.
        var credentialsRequested = false
        /// The token refresh timer is armed.
        var tokenRefreshArmed = false
        /// Joined topics by their name on the wire.
        var topics: [String: Joined] = [:]
        var wireTopics: [SubscriptionID: String] = [:]
        var pending: [String: Pending] = [:]
        /// The keep-alive heartbeat awaiting its reply.
        var keepAliveRef: String?
        /// The keep-alive's interval: the configured one, stretched while the device saves
        /// (``keepAliveStretched(by:)``).
        var keepAlive: Duration
        var isStarted = false
        var session: PhoenixSessionState

        init(configuration: PhoenixChannels, continuing state: PhoenixSessionState?) {
            self.configuration = configuration
            keepAlive = configuration.keepAlive
            session = state ?? PhoenixSessionState()
        }

        /// Phoenix closes a socket that sent nothing for 60 s (`Phoenix.Socket`'s default
        /// timeout): a stretched heartbeat goes at most every 50 s (a configured longer one is
        /// kept). The change applies to the next heartbeat armed; one armed now is armed again.
        package mutating func keepAliveStretched(by factor: Int) -> [WireAction] {
            let stretched = max(configuration.keepAlive, min(configuration.keepAlive * max(1, factor), PhoenixChannels.longestStretchedKeepAlive))
            guard stretched != keepAlive else { return [] }
            keepAlive = stretched
            guard isStarted, !ended, keepAliveRef == nil else { return [] }
            return [.arm(PhoenixChannels.keepAliveTimer, after: keepAlive)]
        }

        package var sessionState: WireSessionState? { WireSessionState(session) }

        /// The socket is open: it is ready (Phoenix authorized the upgrade); the keep-alive starts.
        package mutating func start(credentials: Secret?) -> [WireAction] {
            self.credentials = credentials
            isStarted = true
            return [.ready, .arm(PhoenixChannels.keepAliveTimer, after: keepAlive)] + armTokenRefresh()
        }

        package mutating func perform(_ command: WireCommand) -> [WireAction] {
            guard !ended else { return [] }
            switch command {
            case .subscribe(let subscription, let topic, let resume):
                return join(subscription, topic, resume: resume)
            case .unsubscribe(let subscription):
                guard let wire = wireTopics.removeValue(forKey: subscription), let joined = topics.removeValue(forKey: wire) else { return [] }
                let ref = makeRef()
                pending[ref] = .leave
                return [.cancel(Self.rejoinTimer(wire)), .cancel(Self.replayEndTimer(wire)),
                        send(joinRef: joined.joinRef, ref: ref, topic: wire, event: PhoenixMessage.Event.leave, payload: [:])]
            case .publish(let request, let topic, let data, _):
                return publish(request, to: topic, data)
            case .ping(let request):
                let ref = makeRef()
                pending[ref] = .ping(request)
                return heartbeat(ref: ref)
            case .goodbye:
                ended = true
                var actions: [WireAction] = [.cancel(PhoenixChannels.keepAliveTimer)] + cancelTokenRefresh()
                for (wire, joined) in topics.sorted(by: { $0.key < $1.key }) {
                    actions.append(send(joinRef: joined.joinRef, ref: makeRef(), topic: wire, event: PhoenixMessage.Event.leave, payload: [:]))
                }
                return actions
            case .credentials(let token):
                return credentialsArrived(token)
            case .finished:
                return []
            case .presence(let request, let topic, let state):
                return presence(request, on: topic, state)
            }
        }

        package mutating func timerFired(_ timer: WireTimer) -> [WireAction] {
            guard !ended else { return [] }
            if timer == PhoenixChannels.keepAliveTimer {
                if keepAliveRef != nil {
                    return end(WireEnding(
                        DisconnectReason(.networkLost, detail: "no reply to the Phoenix heartbeat within \(keepAlive): the connection is half-open"), .retry
                    ))
                }
                let ref = makeRef()
                keepAliveRef = ref
                pending[ref] = .keepAlive
                return heartbeat(ref: ref)
            }
            if let ref = Self.replyRef(timer), case .push(let request)? = pending[ref] {
                // The channel did not answer the push: it went out, unconfirmed.
                pending[ref] = nil
                return [.replied(request, .success(.sentUnconfirmed))]
            }
            if let wire = Self.rejoinTopic(timer) { return rejoinTimerFired(wire) }
            if let wire = Self.replayEndTopic(timer) { return finishReplay(wire) }
            if timer == PhoenixChannels.tokenTimer { return requestCredentials() }
            return []
        }

        // MARK: Joining

        private mutating func join(_ subscription: SubscriptionID, _ topic: Topic, resume: StreamPosition?) -> [WireAction] {
            let wire = wireTopic(topic.name)
            if let old = wireTopics[subscription], old != wire { topics[old] = nil }
            let replay = resume.flatMap { replayRequest(topic, resume: $0) }
            let joinRef = makeRef()
            var joined = Joined(subscription: subscription, topic: topic, joinRef: joinRef, phase: .joining(resumed: resume != nil, replay: replay != nil))
            joined.resumedFrom = resume?.milliseconds
            if replay != nil, let limit = SupabaseChannel.replayLimit(topic) {
                joined.replay = ReplayWatch(limit: limit, lastDelivered: session.lastDelivered(on: wire))
            }
            joined.presence.rejoined()
            topics[wire] = joined
            wireTopics[subscription] = wire
            pending[joinRef] = .join(topic: wire, joinRef: joinRef)
            return [send(joinRef: joinRef, ref: joinRef, topic: wire, event: PhoenixMessage.Event.join, payload: joinPayload(topic, replay: replay))]
        }

        /// A crashed channel's rejoin timer: send the rejoin (a fresh `join_ref`), or, when the
        /// rejoin went unanswered, count it and wait the next backoff.
        private mutating func rejoinTimerFired(_ wire: String) -> [WireAction] {
            guard var joined = topics[wire] else { return [] }
            switch joined.phase {
            case .errored(let tries):
                return rejoin(wire, tries: tries + 1)
            case .rejoining(let tries):
                joined.phase = .errored(tries: tries)
                topics[wire] = joined
                return [.arm(Self.rejoinTimer(wire), after: Self.rejoinDelay(afterFailures: tries))]
            case .joining, .joined, .awaitingToken:
                return []
            }
        }

        /// Joins `wire` again on this socket (a fresh `join_ref`), bounded by twice the reply
        /// timeout; `tries`: the rejoins made so far, this one included.
        mutating func rejoin(_ wire: String, tries: Int) -> [WireAction] {
            guard var joined = topics[wire] else { return [] }
            let joinRef = makeRef()
            joined.joinRef = joinRef
            joined.phase = .rejoining(tries: tries)
            joined.presence.rejoined()
            topics[wire] = joined
            pending[joinRef] = .join(topic: wire, joinRef: joinRef)
            return [
                send(joinRef: joinRef, ref: joinRef, topic: wire, event: PhoenixMessage.Event.join, payload: joinPayload(joined.topic, replay: nil)),
                .arm(Self.rejoinTimer(wire), after: configuration.replyTimeout * 2),
            ] + reannounce(wire)
        }

        /// phoenix.js's rejoin steps: 1, 2, 5 s, then every 10 s.
        static func rejoinDelay(afterFailures tries: Int) -> Duration {
            switch tries {
            case 0: .seconds(1)
            case 1: .seconds(2)
            case 2: .seconds(5)
            default: .seconds(10)
            }
        }

        // MARK: Publishing

        private mutating func publish(_ request: RequestID, to topic: Topic, _ data: JSONValue) -> [WireAction] {
            let push = PhoenixChannels.push(from: data)
            if let failure = push.failure { return [.replied(request, .failure(WireFailure(code: "invalid_publish", message: failure)))] }
            let wire = wireTopic(topic.name)
            let joined = topics[wire]
            let ref = makeRef()
            guard configuration.supabase != nil else {
                pending[ref] = .push(request)
                return [send(joinRef: joined?.joinRef, ref: ref, topic: wire, event: push.event, payload: push.payload),
                        .arm(Self.replyTimer(ref), after: configuration.replyTimeout)]
            }
            // Supabase: a broadcast, answered only on a channel joined with `broadcast.ack` — or
            // refused ("unmatched topic") on a topic not joined, so that one waits for its bound.
            let broadcast: JSONValue = ["type": "broadcast", "event": .string(push.event), "payload": push.payload]
            let frame = send(joinRef: joined?.joinRef, ref: ref, topic: wire, event: "broadcast", payload: broadcast)
            if let joined, !SupabaseChannel.acknowledgesBroadcasts(joined.topic) {
                return [frame, .replied(request, .success(.sentUnconfirmed))]
            }
            pending[ref] = .push(request)
            return [frame, .arm(Self.replyTimer(ref), after: configuration.replyTimeout)]
        }

        // MARK: Helpers

        /// The next ref: counted across the session's sockets, so a rejoin after a drop has a
        /// new `join_ref` and no ref of an earlier socket is ever awaited on this one.
        mutating func makeRef() -> String {
            session.nextRef += 1
            return String(session.nextRef)
        }

        /// A heartbeat, which also puts the keep-alive off: one is sent only after `keepAlive`
        /// with nothing else.
        private func heartbeat(ref: String) -> [WireAction] {
            [send(joinRef: nil, ref: ref, topic: PhoenixMessage.Event.socketTopic, event: PhoenixMessage.Event.heartbeat, payload: [:]),
             .arm(PhoenixChannels.keepAliveTimer, after: keepAlive)]
        }

        func send(joinRef: String?, ref: String?, topic: String, event: String, payload: JSONValue) -> WireAction {
            let message = PhoenixMessage(joinRef: joinRef, ref: ref, topic: topic, event: event, payload: .json(payload))
            // A JSON payload always encodes (only binary pushes have limits).
            return .send((try? message.encoded()) ?? .text("[]"))
        }

        func wireTopic(_ name: String) -> String {
            guard configuration.supabase != nil, !name.hasPrefix(SupabaseChannel.prefix) else { return name }
            return SupabaseChannel.prefix + name
        }

        mutating func end(_ ending: WireEnding) -> [WireAction] {
            ended = true
            return [.cancel(PhoenixChannels.keepAliveTimer)] + cancelTokenRefresh() + [.end(ending)]
        }

        static func replyTimer(_ ref: String) -> WireTimer { WireTimer("phoenix-reply-" + ref) }
        static func replayEndTimer(_ topic: String) -> WireTimer { WireTimer("phoenix-replay-end-" + topic) }

        static func replayEndTopic(_ timer: WireTimer) -> String? {
            timer.name.hasPrefix("phoenix-replay-end-") ? String(timer.name.dropFirst("phoenix-replay-end-".count)) : nil
        }
        static func rejoinTimer(_ topic: String) -> WireTimer { WireTimer("phoenix-rejoin-" + topic) }

        static func replyRef(_ timer: WireTimer) -> String? {
            timer.name.hasPrefix("phoenix-reply-") ? String(timer.name.dropFirst("phoenix-reply-".count)) : nil
        }

        static func rejoinTopic(_ timer: WireTimer) -> String? {
            timer.name.hasPrefix("phoenix-rejoin-") ? String(timer.name.dropFirst("phoenix-rejoin-".count)) : nil
        }
    }
}

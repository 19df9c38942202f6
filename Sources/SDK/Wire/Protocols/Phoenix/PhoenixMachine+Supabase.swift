import ConnectionPolicy

// Supabase Realtime's layer on the Phoenix machine: tokens refreshed before they expire and a
// channel closed for an expired one rejoined with a fresh one; this client's presence
// (`track`/`untrack`) announced again after every join; a replay judged once it is over;
// `postgres_changes` delivered to the bindings that asked for them.
extension PhoenixChannels.Machine {
    // MARK: Tokens

    /// Arms the token refresh for the token in use when it is a JWT with an `exp`: a minute
    /// before it, or halfway to it when less than two minutes are left. A token that is not a
    /// JWT is never refreshed ahead: the server's expiry message is what asks for a fresh one.
    mutating func armTokenRefresh() -> [WireAction] {
        guard let supabase = configuration.supabase else { return [] }
        guard let token = credentials?.revealedValue, let expiry = JWTExpiry.seconds(of: token) else { return cancelTokenRefresh() }
        tokenRefreshArmed = true
        return [.arm(PhoenixChannels.tokenTimer, after: Self.refreshDelay(expiresIn: expiry * 1000 - supabase.now()))]
    }

    mutating func cancelTokenRefresh() -> [WireAction] {
        guard tokenRefreshArmed else { return [] }
        tokenRefreshArmed = false
        return [.cancel(PhoenixChannels.tokenTimer)]
    }

    /// How long before asking for a fresh token, for one that expires in `remaining` ms.
    static func refreshDelay(expiresIn remaining: Int64) -> Duration {
        guard remaining > 0 else { return .zero }
        let lead: Int64 = remaining > 120_000 ? 60_000 : remaining / 2
        return .milliseconds(remaining - lead)
    }

    /// Asks the core for the token provider's token (once until it answers).
    mutating func requestCredentials() -> [WireAction] {
        tokenRefreshArmed = false
        guard !credentialsRequested else { return [] }
        credentialsRequested = true
        return [.credentialsNeeded]
    }

    /// The token provider answered. A valid token is pushed to every joined channel
    /// (`access_token`, no reply when accepted: nothing waits for one) and rejoins the channels
    /// closed for an expired token; without one (none, or a JWT already expired), those end.
    mutating func credentialsArrived(_ token: Secret?) -> [WireAction] {
        credentialsRequested = false
        guard let supabase = configuration.supabase else {
            // Plain Phoenix reads the token when it connects: the next socket uses it.
            if let token { credentials = token }
            return []
        }
        let waiting = topics.filter { $0.value.phase == .awaitingToken }.keys.sorted()
        guard let token, !JWTExpiry.hasExpired(token.revealedValue, nowMilliseconds: supabase.now()) else {
            let why = token == nil ? "the token provider gave no token" : "the token provider's token has expired too"
            return waiting.compactMap { wire in
                guard let joined = topics.removeValue(forKey: wire) else { return nil }
                wireTopics[joined.subscription] = nil
                return .subscriptionEnded(joined.subscription, reason: "the channel closed: \(joined.systemError ?? "the token expired"); \(why)")
            }
        }
        let renewed = token != credentials
        credentials = token
        var actions: [WireAction] = []
        for (wire, joined) in topics.sorted(by: { $0.key < $1.key }) where joined.isOnServer {
            actions.append(send(joinRef: joined.joinRef, ref: makeRef(), topic: wire, event: "access_token", payload: ["access_token": .string(token.revealedValue)]))
        }
        for wire in waiting { actions += rejoin(wire, tries: 1) }
        if renewed { actions += armTokenRefresh() }
        return actions
    }

    // MARK: Presence

    /// The app tracks `state` on `topic` (`nil`: untracks). With a join on the server or on its
    /// way, it goes out now, right behind the join (the server takes a topic's frames in order),
    /// so ahead of anything the app publishes there; on a channel waiting to rejoin, it goes out
    /// with the rejoin.
    mutating func presence(_ request: RequestID?, on topic: Topic, _ state: JSONValue?) -> [WireAction] {
        guard configuration.supabase != nil else { return WireAction.presenceUnsupported(request) }
        let wire = wireTopic(topic.name)
        guard var joined = topics[wire] else {
            guard let request else { return [] }
            return [.replied(request, .failure(WireFailure(code: "not_joined", message: "\(topic.name) is not joined on this connection")))]
        }
        joined.tracked = state
        guard joined.takesPushes else {
            var actions: [WireAction] = []
            if let earlier = joined.trackRequest {
                actions.append(.replied(earlier, .failure(WireFailure(code: "superseded", message: "a later track or untrack replaced it before the channel rejoined"))))
            }
            joined.trackRequest = request
            topics[wire] = joined
            return actions
        }
        topics[wire] = joined
        return announce(state, on: wire, request: request)
    }

    /// The `presence` push: `track` with `state`, or `untrack`.
    mutating func announce(_ state: JSONValue?, on wire: String, request: RequestID?) -> [WireAction] {
        guard let joined = topics[wire] else { return [] }
        let payload: JSONValue = state.map { ["type": "presence", "event": "track", "payload": $0] } ?? ["type": "presence", "event": "untrack"]
        let ref = makeRef()
        let frame = send(joinRef: joined.joinRef, ref: ref, topic: wire, event: "presence", payload: payload)
        guard let request else { return [frame] }
        pending[ref] = .push(request)
        return [frame, .arm(Self.replyTimer(ref), after: configuration.replyTimeout)]
    }

    /// Right behind a rejoin: what this client tracks is announced again, ahead of anything else
    /// it sends there; a track or untrack made while it waited is answered.
    mutating func reannounce(_ wire: String) -> [WireAction] {
        guard var joined = topics[wire] else { return [] }
        let request = joined.trackRequest
        joined.trackRequest = nil
        topics[wire] = joined
        if let state = joined.tracked { return announce(state, on: wire, request: request) }
        return request.map { [.replied($0, .success(.acknowledged(position: nil, payload: nil)))] } ?? []
    }

    // MARK: Replay

    /// The replay is over: the rejoin is reported — caught up when the replay reached back and
    /// covers everything the channel carries; a gap when it did not reach back (an event
    /// `replay_gap` then comes before the replayed broadcasts); refetch when the channel carries
    /// what no replay brings (clients' broadcasts, database changes).
    mutating func finishReplay(_ wire: String) -> [WireAction] {
        guard var joined = topics[wire], case .joining = joined.phase, let watch = joined.replay, watch.started else { return [] }
        joined.phase = .joined
        joined.replay = nil
        let held = joined.held
        joined.held = []
        topics[wire] = joined
        let gap = watch.lastDelivered != nil && !watch.reachedBack
        let covered = SupabaseChannel.databaseBroadcastsOnly(joined.topic) && !SupabaseChannel.receivesPostgresChanges(joined.topic)
            && !session.sawClientBroadcast(on: wire)
        let outcome: SubscribeOutcome = gap ? .gap(at: nil) : covered ? .caughtUp(to: nil) : .resumeUnsupported
        var actions: [WireAction] = [.cancel(Self.replayEndTimer(wire)), .subscribed(joined.subscription, outcome)]
        if gap {
            let message = "the replay did not reach back to the last broadcast delivered (\(watch.count) came, with a limit of \(watch.limit), "
                + "and not that one: cut at the limit, or the device's clock is off by more than the margin): broadcasts may be missing — refetch"
            let payload: JSONValue = ["limit": JSONValue(watch.limit), "replayed": JSONValue(watch.count), "message": .string(message)]
            actions.append(.delivery(joined.subscription, ["event": "replay_gap", "payload": payload], position: nil))
        }
        return actions + held
    }

    /// A replayed broadcast came: counted, and whether it is the last one delivered before.
    mutating func noteReplayed(id: String?, on wire: String) {
        guard var watch = topics[wire]?.replay, watch.started else { return }
        watch.count += 1
        if let id, id == watch.lastDelivered { watch.reachedBack = true }
        topics[wire]?.replay = watch
    }

    // MARK: Database changes

    /// The bindings a join's reply names (`response.postgres_changes`: id and event).
    static func bindings(in response: JSONValue?) -> [Int64: String]? {
        var bindings: [Int64: String] = [:]
        for binding in response?["postgres_changes"]?.arrayValue ?? [] {
            if let id = binding["id"]?.integerValue { bindings[id] = binding["event"]?.stringValue ?? "*" }
        }
        return bindings.isEmpty ? nil : bindings
    }

    /// Indicates that a `postgres_changes` payload is for a binding of this join that asked for
    /// its event: the server filters rows, not events (an INSERT binding gets UPDATEs too).
    static func wants(_ change: JSONValue, bindings: [Int64: String]?) -> Bool {
        guard let bindings else { return true }
        let ids = change["ids"]?.arrayValue?.compactMap(\.integerValue) ?? []
        guard !ids.isEmpty else { return true }
        let type = change["data"]?["type"]?.stringValue ?? ""
        return ids.contains { id in
            bindings[id].map { $0 == "*" || $0.uppercased() == type.uppercased() } ?? false
        }
    }

    // MARK: System messages

    /// Supabase's word for a channel closed for its message rate: rejoined with backoff.
    static func isRateLimit(_ message: String) -> Bool { message.contains("Too many messages per second") }

    /// Supabase's word for a channel closed for an expired token: rejoined with a fresh one.
    static func isTokenExpiry(_ message: String) -> Bool { message.contains("Token has expired") }
}

extension PhoenixChannels.Machine.Joined {
    /// Indicates that the server holds the join (or is answering it): pushes reach it.
    var isOnServer: Bool {
        switch phase {
        case .joining, .joined: true
        case .errored, .rejoining, .awaitingToken: false
        }
    }

    /// Indicates that a push sent now reaches this join: it is on the server, or a rejoin is on
    /// its way ahead of the push.
    var takesPushes: Bool {
        if case .rejoining = phase { return true }
        return isOnServer
    }
}

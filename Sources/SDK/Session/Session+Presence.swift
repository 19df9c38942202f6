extension Session {
    /// Announces this client on `channel` with `state` (Supabase Presence's `track`): every
    /// member's ``PresenceView`` shows it under the channel's presence key. Tracking again
    /// replaces the state. The session announces the latest state again after every rejoin and
    /// reconnect, before anything the app publishes there, until ``untrack(on:)`` or the
    /// channel is unsubscribed.
    ///
    /// Connected with the channel joined (or its join on the way), it returns once the server
    /// accepted the state (and throws ``SessionError/Code/rejected`` if it refused); otherwise it
    /// returns at once and the state goes out with the channel's next join. If the connection is lost before the server
    /// answers, it throws ``SessionError/Code/connectionLost`` and the state is still announced
    /// with the next join.
    ///
    /// - Throws: ``SessionError/Code/invalidArgument`` when the channel is not subscribed, or
    ///   when the server's protocol has no presence to track (only Supabase Realtime has).
    public func track(_ state: JSONValue, on channel: String) async throws {
        try await announcePresence(state, on: channel, call: "track(_:on:)")
    }

    /// Stops announcing this client on `channel` (Supabase Presence's `untrack`): it leaves every
    /// member's ``PresenceView``, and a rejoin does not announce it again. It returns and throws
    /// as ``track(_:on:)`` does.
    public func untrack(on channel: String) async throws {
        try await announcePresence(nil, on: channel, call: "untrack(on:)")
    }

    private func announcePresence(_ state: JSONValue?, on channel: String, call: StaticString) async throws {
        try refuseIfEnded(call)
        ensureStarted()
        guard settings.wireProtocol.capabilities.tracksPresence else {
            throw SessionError(.invalidArgument, "\(call): the server's protocol (\(settings.serverProtocol.name)) has no presence to track")
        }
        guard let held = channels[channel] else {
            throw SessionError(.invalidArgument, "\(call): not subscribed to \(channel) (subscribe first)")
        }
        channels[channel]?.tracked = state
        // Joined, or its join on the way (the announcement goes right behind it); otherwise the
        // next join carries it.
        guard acceptsRequests, link.connection?.channels.isJoinedOrJoining(channel) == true else { return }
        let topic = Topic(channel, options: held.options)
        _ = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<PublishReceipt, any Error>) in
            let id = makeRequestID()
            requests.waiting[id] = PendingRequest(waiter: continuation)
            armRequestTimeout(id, after: settings.requestTimeout)
            perform(.presence(id, topic, state: state))
        }
    }
}

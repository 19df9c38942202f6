import Foundation

extension ServerProtocol {
    /// Phoenix Channels, V2 serializer (`vsn=2.0.0`), as Phoenix 1.7 and 1.8 serve it. The server
    /// URL is the socket's (`wss://host/socket`; `/websocket` is added, and a bare host gets
    /// `/socket/websocket`). A channel is a topic (``Topic/phoenix(_:params:)``; a plain name
    /// joins with no params); its messages arrive as `{"event", "payload"}` (a binary broadcast
    /// as `{"event": "blob", "payload": {"binary": "AAH/ew=="}}`, its bytes in base64 under
    /// `payload.binary`), its presence as ``PresenceView``s (event `presence`), a
    /// crash of the channel as event `phx_error` (it rejoins by itself, with backoff). A publish's
    /// data is `{"event": name, "payload": …}`: `acknowledged` with the channel's reply, or
    /// `sentUnconfirmed` when the channel does not reply within `replyTimeout`; a reply with
    /// status `error` rejects it. Phoenix cannot resume: every rejoin after a reconnect is
    /// reported as ``RecoveryReport/refetch``. A default Phoenix socket holds at most 100
    /// channels (`max_channels_per_transport`): the 101st subscribe is refused, as `rejected`
    /// with "too many channels joined". See <doc:BackendProtocols>.
    ///
    /// - Parameters:
    ///   - params: query items for the server's `connect/3`, beside `vsn`.
    ///   - credentials: where the token provider's token goes (default the query item `token`).
    ///   - keepAlive: the heartbeat sent when nothing else was for this long (default 30 s, as
    ///     phoenix.js; the server closes a socket idle for 60 s). One unanswered by the next
    ///     ends the connection. The session's own heartbeat, probe and `ping()` use it too.
    ///   - replyTimeout: how long a push waits for the channel's reply before it counts as sent,
    ///     not confirmed (default 5 s; keep it under the settings' request timeout).
    public static func phoenix(
        params: [String: String] = [:], credentials: PhoenixCredentials = .queryItem("token"), keepAlive: Duration = .seconds(30),
        replyTimeout: Duration = .seconds(5)
    ) -> ServerProtocol {
        let adapter = PhoenixChannels(params: params, credentials: credentials, keepAlive: keepAlive, replyTimeout: replyTimeout)
        return ServerProtocol(kind: .adapter(adapter), name: "phoenix")
    }

    /// Supabase Realtime (Phoenix Channels with Supabase's layer). The server URL is the
    /// project's realtime endpoint, `wss://<project>.supabase.co/realtime/v1`. The project's
    /// `apiKey` (the anon key) goes in the URL; the token provider's token (the user's access
    /// token; the API key without one) goes in every join, and ``Session/credentialsChanged()``
    /// pushes a new one to every joined channel without reconnecting. A channel is
    /// ``Topic/supabase(_:config:)`` (or a plain name with the default config). Messages arrive as
    /// `{"event", "payload"}`: `broadcast`, `postgres_changes`, `presence` (a ``PresenceView``),
    /// and `system` (the server's word on the channel, e.g. "Subscribed to PostgreSQL", or an
    /// error that stops it: the subscription then ends with that message — but a channel closed
    /// for its message rate is rejoined with backoff, and one closed for an expired token is
    /// rejoined with the token provider's next token, which is also asked for before a JWT
    /// expires). `postgres_changes` arrive only for the events a binding asked for. A publish's
    /// data is `{"event": name, "payload": …}`, sent as a broadcast: `acknowledged` on a channel
    /// with `acknowledgesBroadcasts`, else `sentUnconfirmed`. ``Session/track(_:on:)`` announces
    /// this client's presence, again after every rejoin. After a reconnect a private channel with
    /// a `replayLimit` replays the database's broadcasts it missed: caught up when those are all
    /// it carries (``SupabaseChannelConfig/broadcastOrigin``), a gap when the replay did not reach
    /// back; every other channel, refetch. A 403 at the upgrade is retried after 1, 2 and 4 s
    /// (Supabase's joins-per-second limit answers 403 too) before it counts as rejected
    /// credentials. See <doc:BackendProtocols>.
    ///
    /// - Parameters:
    ///   - apiKey: the project's anon (publishable) key, redacted from every log line.
    ///   - keepAlive: the heartbeat (default 25 s, as supabase-swift).
    ///   - replyTimeout: how long an acknowledged broadcast waits for its ack (default 5 s).
    public static func supabaseRealtime(apiKey: String, keepAlive: Duration = .seconds(25), replyTimeout: Duration = .seconds(5)) -> ServerProtocol {
        let adapter = PhoenixChannels(
            credentials: .none, keepAlive: keepAlive, replyTimeout: replyTimeout, supabase: PhoenixChannels.Supabase(apiKey: apiKey)
        )
        return ServerProtocol(kind: .adapter(adapter), name: "supabase-realtime")
    }
}

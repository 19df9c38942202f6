extension Topic {
    /// A Phoenix topic (`room:lobby`), joined with `params` as the `phx_join` payload.
    public static func phoenix(_ topic: String, params: [String: JSONValue] = [:]) -> Topic {
        Topic(topic, options: params.isEmpty ? nil : .object(params))
    }

    /// A Supabase Realtime channel (`room1`; on the wire `realtime:room1`) with its join config.
    public static func supabase(_ channel: String, config: SupabaseChannelConfig = SupabaseChannelConfig()) -> Topic {
        Topic(channel, options: config.options)
    }
}

/// A Supabase Realtime channel's join `config`, as supabase-js and supabase-swift send it.
public struct SupabaseChannelConfig: Hashable, Sendable {
    /// Receive the broadcasts this client sends (`broadcast.self`).
    public var receivesOwnBroadcasts: Bool
    /// The server acknowledges each broadcast (`broadcast.ack`): a publish ends `acknowledged`;
    /// without it, `sentUnconfirmed`.
    public var acknowledgesBroadcasts: Bool
    /// The key this client's presence is tracked under (`presence.key`; empty: the server's).
    public var presenceKey: String
    /// The database changes to receive (`postgres_changes`).
    public var postgresChanges: [PostgresChangeFilter]
    /// A private channel (RLS on `realtime.messages`): the only kind that can replay.
    public var isPrivate: Bool
    /// On a private channel: after a reconnect, ask the server for the broadcasts sent since the
    /// last one delivered, at most this many (Supabase replays at most 25). `nil`: no replay
    /// (the channel is reported to refetch).
    public var replayLimit: Int?
    /// Where the channel's broadcasts come from. Supabase stores and replays only the database's
    /// (`realtime.send`, `broadcast_changes`); a client's broadcast is delivered live and never
    /// stored. A replayed channel is reported caught up only when it carries the database's
    /// alone (and no `postgres_changes`, which are not replayed either); otherwise the replay
    /// still brings the database's broadcasts, and the channel is named for refetch.
    public var broadcastOrigin: SupabaseBroadcastOrigin

    /// A channel's configuration; every argument's default is Supabase's own.
    public init(
        receivesOwnBroadcasts: Bool = false, acknowledgesBroadcasts: Bool = false, presenceKey: String = "",
        postgresChanges: [PostgresChangeFilter] = [], isPrivate: Bool = false, replayLimit: Int? = nil,
        broadcastOrigin: SupabaseBroadcastOrigin = .clientsAndDatabase
    ) {
        self.receivesOwnBroadcasts = receivesOwnBroadcasts
        self.acknowledgesBroadcasts = acknowledgesBroadcasts
        self.presenceKey = presenceKey
        self.postgresChanges = postgresChanges
        self.isPrivate = isPrivate
        self.replayLimit = replayLimit
        self.broadcastOrigin = broadcastOrigin
    }

    var options: JSONValue {
        var options: [String: JSONValue] = [
            "config": [
                "broadcast": ["self": .bool(receivesOwnBroadcasts), "ack": .bool(acknowledgesBroadcasts)],
                "presence": ["key": .string(presenceKey)],
                "postgres_changes": .array(postgresChanges.map(\.json)),
                "private": .bool(isPrivate),
            ],
        ]
        if isPrivate, let replayLimit {
            options["replayLimit"] = JSONValue(replayLimit)
            if broadcastOrigin == .databaseOnly { options["broadcastOrigin"] = "database" }
        }
        return .object(options)
    }
}

/// Where a Supabase channel's broadcasts come from: what a replay after a reconnect can bring.
///
/// An input you choose; a later release may add a case, so a `switch` over it needs a `default`.
public enum SupabaseBroadcastOrigin: Hashable, Sendable {
    /// Clients broadcast on the channel (and the database may too): a replay cannot bring what
    /// clients sent while away, so the channel is named for refetch after a reconnect (the
    /// database's broadcasts are replayed all the same). The default: the safe answer.
    case clientsAndDatabase
    /// Only the database broadcasts on the channel (`realtime.send`, `broadcast_changes`): the
    /// replay brings everything missed, up to its limit. Should a client's broadcast (one without
    /// an id) come on it all the same, the channel is named for refetch from then on.
    case databaseOnly
}

/// One `postgres_changes` subscription: which rows' changes a channel receives.
public struct PostgresChangeFilter: Hashable, Sendable {
    /// `*`, `INSERT`, `UPDATE` or `DELETE`.
    public var event: String
    /// The database schema (default `public`).
    public var schema: String
    /// The table; `nil` for every table in the schema.
    public var table: String?
    /// A row filter (`id=eq.1`).
    public var filter: String?

    /// Changes of `event` (`INSERT`, `UPDATE`, `DELETE`, `*`) in `schema`.`table`, filtered by
    /// `filter` (Supabase's syntax, `id=eq.1`).
    public init(event: String = "*", schema: String = "public", table: String? = nil, filter: String? = nil) {
        self.event = event
        self.schema = schema
        self.table = table
        self.filter = filter
    }

    var json: JSONValue {
        var members: [String: JSONValue] = ["event": .string(event), "schema": .string(schema)]
        if let table { members["table"] = .string(table) }
        if let filter { members["filter"] = .string(filter) }
        return .object(members)
    }
}

/// Reads a Supabase topic's options (``SupabaseChannelConfig``).
enum SupabaseChannel {
    static let prefix = "realtime:"

    static func config(_ topic: Topic) -> JSONValue {
        topic.options?["config"] ?? SupabaseChannelConfig().options["config"]!
    }

    static func acknowledgesBroadcasts(_ topic: Topic) -> Bool {
        config(topic)["broadcast"]?["ack"]?.boolValue == true
    }

    /// Indicates that the app declared the channel's broadcasts to be the database's alone.
    static func databaseBroadcastsOnly(_ topic: Topic) -> Bool {
        topic.options?["broadcastOrigin"]?.stringValue == "database"
    }

    /// Indicates that the channel receives database changes (never replayed).
    static func receivesPostgresChanges(_ topic: Topic) -> Bool {
        !(config(topic)["postgres_changes"]?.arrayValue ?? []).isEmpty
    }

    static func replayLimit(_ topic: Topic) -> Int? {
        guard config(topic)["private"]?.boolValue == true, let limit = topic.options?["replayLimit"]?.integerValue, limit > 0 else { return nil }
        return Int(limit)
    }

    /// `{"config", "access_token"}`, the config asking for a replay when there is one.
    static func joinPayload(_ topic: Topic, accessToken: String, replay: JSONValue?) -> JSONValue {
        var config = config(topic).objectValue ?? [:]
        if let replay {
            var broadcast = config["broadcast"]?.objectValue ?? [:]
            broadcast["replay"] = replay
            config["broadcast"] = .object(broadcast)
        }
        return ["config": .object(config), "access_token": .string(accessToken)]
    }
}

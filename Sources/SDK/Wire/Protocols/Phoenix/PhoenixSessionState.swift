/// What a Phoenix session keeps across its sockets: the ref counter (a rejoin after a drop gets a
/// new `join_ref`), and on Supabase the ids of the broadcasts delivered on each replayable topic,
/// with the position each was delivered at, so that a replay after a reconnect, which reaches
/// back past the last one delivered, repeats none of them — and after a relaunch brings again,
/// flagged, those delivered after where the app had finished — and the topics on which a
/// client's broadcast (never stored, never replayed) was seen.
package struct PhoenixSessionState: Hashable, Sendable, WireSessionStateValue {
    package static let kind = "phoenix-session/2"

    /// The last ref made.
    package var nextRef: UInt64 = 0

    /// How many ids are kept per topic (Supabase replays at most 25 messages).
    package static let remembered = 256

    private var seen: [String: RecentIDs] = [:]
    private var clientBroadcasts: Set<String> = []

    package init() {}

    /// Indicates that a broadcast with an id was delivered on `topic` in this session.
    package func hasDelivered(on topic: String) -> Bool {
        seen[topic].map { !$0.order.isEmpty } ?? false
    }

    /// The id of the last broadcast delivered on `topic` that had one (a stored one).
    package func lastDelivered(on topic: String) -> String? {
        seen[topic]?.order.last
    }

    /// Notes that a broadcast without an id (a client's: Supabase never stores those) came on
    /// `topic`: a replay cannot bring what such broadcasts sent while away.
    package mutating func noteClientBroadcast(on topic: String) {
        clientBroadcasts.insert(topic)
    }

    /// Indicates that a client's broadcast came on `topic` in this session.
    package func sawClientBroadcast(on topic: String) -> Bool {
        clientBroadcasts.contains(topic)
    }

    /// Remembers `id` as delivered on `topic` at position `milliseconds`; false when it already was.
    package mutating func remember(_ id: String, on topic: String, at milliseconds: Int64) -> Bool {
        seen[topic, default: RecentIDs()].insert(id, at: milliseconds, keeping: Self.remembered)
    }

    /// The position `id` was delivered at on `topic`, if it was.
    package func deliveredAt(_ id: String, on topic: String) -> Int64? {
        seen[topic]?.members[id]
    }

    /// The last ids, oldest first, with the position each was delivered at.
    private struct RecentIDs: Hashable, Sendable, Codable {
        var order: [String] = []
        var members: [String: Int64] = [:]

        mutating func insert(_ id: String, at milliseconds: Int64, keeping limit: Int) -> Bool {
            guard members[id] == nil else { return false }
            members[id] = milliseconds
            order.append(id)
            if order.count > limit { members[order.removeFirst()] = nil }
            return true
        }
    }
}

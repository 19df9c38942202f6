/// What a Phoenix session keeps across its sockets: the ref counter (a rejoin after a drop gets a
/// new `join_ref`), and on Supabase the ids of the broadcasts delivered on each replayable topic,
/// so that a replay after a reconnect, which reaches back past the last one delivered, repeats
/// none of them, and the topics on which a client's broadcast (never stored, never replayed)
/// was seen.
package struct PhoenixSessionState: Hashable, Sendable, WireSessionStateValue {
    package static let kind = "phoenix-session/1"

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

    /// Remembers `id` as delivered on `topic`; false when it already was.
    package mutating func remember(_ id: String, on topic: String) -> Bool {
        seen[topic, default: RecentIDs()].insert(id, keeping: Self.remembered)
    }

    /// The last ids, oldest first, with a set to look them up.
    private struct RecentIDs: Hashable, Sendable, Codable {
        var order: [String] = []
        var members: Set<String> = []

        mutating func insert(_ id: String, keeping limit: Int) -> Bool {
            guard members.insert(id).inserted else { return false }
            order.append(id)
            if order.count > limit { members.remove(order.removeFirst()) }
            return true
        }
    }
}

/// Who is present on a Phoenix (or Supabase Realtime) topic: each key (a user, a device) with
/// its metas, one per connection that tracks it (each carries its `phx_ref`).
///
/// The session keeps it for every joined topic and delivers it whole, as a ``ChannelMessage``
/// whose `event` is `presence`, each time it changes: read it with ``init(_:)``. It applies
/// `presence_state` and `presence_diff` in whatever order they come, as phoenix.js `Presence`
/// does: after every join (a reconnect, a rejoin after the channel crashed) the diffs wait for
/// that join's state, then apply on top of it — so a view is never built from a diff of one
/// join and the state of another.
public struct PresenceView: Hashable, Sendable {
    /// The metas of each key present (never empty).
    public private(set) var members: [String: [JSONValue]]

    /// A view of `members`: each key's metas.
    public init(members: [String: [JSONValue]] = [:]) {
        self.members = members.filter { !$0.value.isEmpty }
    }

    /// The view a `presence` message carries (`nil` for any other message).
    public init?(_ message: ChannelMessage) {
        guard message.data["event"]?.stringValue == "presence", let state = message.data["payload"], case .object = state else { return nil }
        self.init()
        replace(with: state)
    }

    /// The keys present, sorted.
    public var keys: [String] { members.keys.sorted() }

    /// The view as `presence_state` carries it: `{key: {"metas": […]}}`.
    public var json: JSONValue {
        .object(members.mapValues { ["metas": .array($0)] })
    }

    /// A `presence_state`: the whole view.
    package mutating func replace(with state: JSONValue) {
        members = [:]
        for (key, presence) in state.objectValue ?? [:] {
            let metas = presence["metas"]?.arrayValue ?? []
            if !metas.isEmpty { members[key] = metas }
        }
    }

    /// A `presence_diff`: `joins` add metas (one already held, by its `phx_ref`, is replaced),
    /// `leaves` remove them by `phx_ref`; a key left with no metas is gone.
    package mutating func apply(diff: JSONValue) {
        for (key, presence) in diff["joins"]?.objectValue ?? [:] {
            let joined = presence["metas"]?.arrayValue ?? []
            let refs = Set(joined.compactMap(Self.ref))
            let kept = (members[key] ?? []).filter { Self.ref($0).map { !refs.contains($0) } ?? true }
            let metas = kept + joined
            if !metas.isEmpty { members[key] = metas }
        }
        for (key, presence) in diff["leaves"]?.objectValue ?? [:] {
            guard let current = members[key] else { continue }
            let refs = Set((presence["metas"]?.arrayValue ?? []).compactMap(Self.ref))
            let metas = current.filter { Self.ref($0).map { !refs.contains($0) } ?? true }
            members[key] = metas.isEmpty ? nil : metas
        }
    }

    private static func ref(_ meta: JSONValue) -> String? { meta["phx_ref"]?.stringValue }
}

/// One join's presence: the view, and the diffs that came before that join's state.
struct PresenceSync: Hashable, Sendable {
    var view = PresenceView()
    var synced = false
    var pending: [JSONValue] = []

    /// A new join: its state is awaited (the view is kept until it comes).
    mutating func rejoined() {
        synced = false
        pending = []
    }

    /// Applies a `presence_state`, then the diffs that waited for it; returns the view.
    mutating func state(_ state: JSONValue) -> PresenceView {
        view.replace(with: state)
        for diff in pending { view.apply(diff: diff) }
        pending = []
        synced = true
        return view
    }

    /// Applies a `presence_diff`; the view, or `nil` while the join's state is awaited.
    mutating func diff(_ diff: JSONValue) -> PresenceView? {
        guard synced else {
            pending.append(diff)
            return nil
        }
        view.apply(diff: diff)
        return view
    }
}

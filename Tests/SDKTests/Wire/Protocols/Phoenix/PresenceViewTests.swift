@testable import SDK
import Testing

/// The presence view: phoenix.js `Presence.syncState`/`syncDiff`'s rules (metas matched by
/// `phx_ref`), and the order a join's state and diffs may come in (transcripts §3: the diff first).
@Suite("Presence view")
struct PresenceViewTests {
    static func meta(_ ref: String) -> JSONValue { ["phx_ref": .string(ref)] }

    @Test("a diff's joins add metas (one already held is replaced), its leaves remove them; a key with none left is gone")
    func diffs() {
        var view = PresenceView(members: ["ann": [Self.meta("a1")]])
        view.apply(diff: ["joins": ["ann": ["metas": [Self.meta("a2"), Self.meta("a1")]], "bob": ["metas": [Self.meta("b1")]]], "leaves": [:]])
        #expect(view.members == ["ann": [Self.meta("a2"), Self.meta("a1")], "bob": [Self.meta("b1")]])
        view.apply(diff: ["joins": [:], "leaves": ["ann": ["metas": [Self.meta("a1")]], "bob": ["metas": [Self.meta("b1")]], "cat": ["metas": [Self.meta("c1")]]]])
        #expect(view.members == ["ann": [Self.meta("a2")]])
        #expect(view.keys == ["ann"])
    }

    @Test("a join's diffs wait for its state, then apply on top of it; a new join waits again, keeping the last view meanwhile")
    func syncAcrossJoins() {
        var sync = PresenceSync()
        let early = sync.diff(["joins": ["ann": ["metas": [Self.meta("a1")]]], "leaves": [:]])
        #expect(early == nil)
        let first = sync.state(["bob": ["metas": [Self.meta("b1")]]])
        #expect(first.members == ["ann": [Self.meta("a1")], "bob": [Self.meta("b1")]])
        sync.rejoined()
        #expect(sync.view.keys == ["ann", "bob"], "the last view stands until the new join's state")
        let waiting = sync.diff(["joins": [:], "leaves": ["ann": ["metas": [Self.meta("a1")]]]])
        #expect(waiting == nil)
        let second = sync.state(["ann": ["metas": [Self.meta("a1")]], "cat": ["metas": [Self.meta("c1")]]])
        #expect(second.members == ["cat": [Self.meta("c1")]])
    }

    @Test("read from a presence message; nil from any other")
    func fromMessage() {
        let message = ChannelMessage(channel: "room", sequence: nil, data: ["event": "presence", "payload": ["ann": ["metas": [Self.meta("a1")]]]])
        #expect(PresenceView(message)?.members == ["ann": [Self.meta("a1")]])
        #expect(PresenceView(message)?.json == ["ann": ["metas": [Self.meta("a1")]]])
        #expect(PresenceView(ChannelMessage(channel: "room", sequence: nil, data: ["event": "new_msg", "payload": [:]])) == nil)
    }
}

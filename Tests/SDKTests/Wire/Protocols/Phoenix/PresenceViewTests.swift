@testable import SDK
import Testing

/// The presence view: phoenix.js `Presence.syncState`/`syncDiff`'s rules (metas matched by
/// `phx_ref`), and the order a join's state and diffs may come in (transcripts §3: the diff first).
/// Two cases are phoenix.js's own `presence_test.js` scenarios, as supabase/realtime-js
/// `test/presence_test.ts` carries them (in Phoenix's wire shape: `metas` with `phx_ref`).
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

    static func entry(_ refs: String...) -> JSONValue { ["metas": .array(refs.map(Self.meta))] }

    @Test("syncDiff (presence_test 'removes presence when presences is empty and adds additional presence')")
    func syncDiffFixture() {
        var view = PresenceView(members: ["u1": [Self.meta("1")], "u2": [Self.meta("2")], "u3": [Self.meta("3")]])
        view.apply(diff: ["joins": ["u1": Self.entry("1.2")], "leaves": ["u2": Self.entry("2")]])
        #expect(view.members == ["u1": [Self.meta("1"), Self.meta("1.2")], "u3": [Self.meta("3")]])
    }

    @Test("presence_test 'applies pending diff if state is not yet synced', across a disconnect and reconnect")
    func pendingDiffAcrossReconnect() {
        var sync = PresenceSync()
        let leaveU2 = sync.diff(["joins": [:], "leaves": ["u2": Self.entry("2")]])
        #expect(leaveU2 == nil && sync.view.members.isEmpty)
        let synced = sync.state(["u1": Self.entry("1"), "u2": Self.entry("2")])
        #expect(synced.members == ["u1": [Self.meta("1")]], "the pending leave applied on the state")
        sync.rejoined()  // disconnect and reconnect: a new join
        let leaveU1 = sync.diff(["joins": [:], "leaves": ["u1": Self.entry("1")]])
        #expect(leaveU1 == nil && sync.view.members == ["u1": [Self.meta("1")]], "the last view stands")
        let resynced = sync.state(["u1": Self.entry("1"), "u3": Self.entry("3")])
        #expect(resynced.members == ["u3": [Self.meta("3")]])
    }

    @Test("read from a presence message; nil from any other")
    func fromMessage() {
        let message = ChannelMessage(channel: "room", sequence: nil, data: ["event": "presence", "payload": ["ann": ["metas": [Self.meta("a1")]]]])
        #expect(PresenceView(message)?.members == ["ann": [Self.meta("a1")]])
        #expect(PresenceView(message)?.json == ["ann": ["metas": [Self.meta("a1")]]])
        #expect(PresenceView(ChannelMessage(channel: "room", sequence: nil, data: ["event": "new_msg", "payload": [:]])) == nil)
    }
}

import ConnectionPolicy
@testable import SDK
import Testing

/// Presence this client announces (`track`/`untrack`, supabase-transcripts.md §4 and fact 7):
/// the pushes, their replies, and the announcement again after every join.
extension SupabaseMachineTests {
    static let lobby = Topic.supabase("lobby", config: SupabaseChannelConfig(presenceKey: "alice"))

    static func track(_ payload: JSONValue) -> JSONValue { ["type": "presence", "event": "track", "payload": payload] }

    @Test("track while joined: the presence push, answered by the channel's reply; untrack likewise; an error reply rejects (alice, §4)")
    func trackAndUntrack() {
        var machine = PhoenixMachineTests.joined(Self.supabase, topic: Self.lobby)
        let track = machine.perform(.presence(7, Self.lobby, state: ["status": "online", "n": 1]))
        #expect(PhoenixMachineTests.frames(track) == [PhoenixMachineTests.message("1", "2", "realtime:lobby", "presence", Self.track(["status": "online", "n": 1]))])
        #expect(PhoenixMachineTests.others(track) == [.arm(WireTimer("phoenix-reply-2"), after: .seconds(5))])
        // The diff of this client's own join comes right after the reply.
        #expect(machine.receive(.text(#"["1","2","realtime:lobby","phx_reply",{"response":{},"status":"ok"}]"#))
            == [.cancel(WireTimer("phoenix-reply-2")), .replied(7, .success(.acknowledged(position: nil, payload: [:])))])
        let untrack = machine.perform(.presence(8, Self.lobby, state: nil))
        #expect(PhoenixMachineTests.frames(untrack) == [PhoenixMachineTests.message("1", "3", "realtime:lobby", "presence", ["type": "presence", "event": "untrack"])])
        expectKinds(machine.receive(.text(#"["1","3","realtime:lobby","phx_reply",{"response":{},"status":"ok"}]"#)), [.cancel, .replied])
        expectKinds(machine.perform(.presence(9, Self.lobby, state: ["x": 1])), [.send, .arm])
        #expect(machine.receive(.text(#"["1","4","realtime:lobby","phx_reply",{"response":{},"status":"error"}]"#))
            == [.cancel(WireTimer("phoenix-reply-4")), .replied(9, .failure(WireFailure(code: "error", message: "status error", payload: [:])))])
    }

    @Test("a state tracked while the join is on its way goes out right behind it (the server takes a topic's frames in order), so ahead of the outbox; the call is answered by its own reply")
    func trackedBehindTheJoin() {
        var machine = Self.machine()
        let join = machine.perform(.subscribe(1, Self.lobby, resume: nil))
        let first = machine.perform(.presence(nil, Self.lobby, state: ["s": 1]))
        #expect(PhoenixMachineTests.frames(join + first).map(\.event) == ["phx_join", "presence"])
        #expect(PhoenixMachineTests.frames(first) == [PhoenixMachineTests.message("1", "2", "realtime:lobby", "presence", Self.track(["s": 1]))])
        #expect(PhoenixMachineTests.others(first).isEmpty, "the session's own announcement awaits no reply")
        let second = machine.perform(.presence(5, Self.lobby, state: ["s": 2]))
        #expect(PhoenixMachineTests.others(second) == [.arm(WireTimer("phoenix-reply-3"), after: .seconds(5))])
        #expect(machine.receive(.text(#"["1","1","realtime:lobby","phx_reply",{"response":{"postgres_changes":[]},"status":"ok"}]"#)) == [.subscribed(1, .live(at: nil))])
        #expect(machine.receive(.text(#"["1","3","realtime:lobby","phx_reply",{"response":{},"status":"ok"}]"#)).last
            == .replied(5, .success(.acknowledged(position: nil, payload: [:]))))
    }

    @Test("the machine's own rejoins (a crashed channel) announce the tracked state right behind the rejoin; a call made while it waited is answered by it, a second one supersedes the first; after untrack, nothing")
    func reannouncedAfterRejoin() {
        var machine = PhoenixMachineTests.joined(Self.supabase, topic: Self.lobby)
        expectKinds(machine.perform(.presence(nil, Self.lobby, state: ["s": "here"])), [.send])
        expectKinds(machine.receive(.text(#"["1",null,"realtime:lobby","phx_error",{}]"#)), [.arm, .delivery])
        #expect(machine.perform(.presence(6, Self.lobby, state: ["s": "first"])).isEmpty, "waiting to rejoin: held")
        let superseded = machine.perform(.presence(7, Self.lobby, state: ["s": "back"]))
        #expect(superseded.count == 1 && { if case .replied(6, .failure(let failure)) = superseded[0] { failure.code == "superseded" } else { false } }())
        let rejoin = machine.timerFired(WireTimer("phoenix-rejoin-realtime:lobby"))
        let frames = PhoenixMachineTests.frames(rejoin)
        #expect(frames.map(\.event) == ["phx_join", "presence"])
        let joinRef = frames.first?.joinRef ?? "?"
        #expect(frames.last == PhoenixMachineTests.message(joinRef, frames.last?.ref, "realtime:lobby", "presence", Self.track(["s": "back"])), "the latest state, with the new join_ref")
        let trackRef = frames.last?.ref ?? "?"
        #expect(machine.receive(.text(#"["\#(joinRef)","\#(joinRef)","realtime:lobby","phx_reply",{"response":{},"status":"ok"}]"#))
            == [.cancel(WireTimer("phoenix-rejoin-realtime:lobby"))])
        #expect(machine.receive(.text(#"["\#(joinRef)","\#(trackRef)","realtime:lobby","phx_reply",{"response":{},"status":"ok"}]"#)).last
            == .replied(7, .success(.acknowledged(position: nil, payload: [:]))))
        expectKinds(machine.perform(.presence(nil, Self.lobby, state: nil)), [.send])
        expectKinds(machine.receive(.text(#"["\#(joinRef)",null,"realtime:lobby","phx_error",{}]"#)), [.arm, .delivery])
        let again = PhoenixMachineTests.frames(machine.timerFired(WireTimer("phoenix-rejoin-realtime:lobby")))
        #expect(again.map(\.event) == ["phx_join"], "untracked: a rejoin does not undo it")
    }

    @Test("presence on a topic not joined, or on plain Phoenix, fails the call with a typed failure")
    func presenceRefused() {
        var machine = Self.machine()
        let failure = machine.perform(.presence(3, Self.lobby, state: [:]))
        #expect(failure == [.replied(3, .failure(WireFailure(code: "not_joined", message: "lobby is not joined on this connection")))])
        #expect(machine.perform(.presence(nil, Self.lobby, state: [:])).isEmpty)
        var phoenix = PhoenixMachineTests.joined()
        #expect(phoenix.perform(.presence(4, Topic("room:lobby"), state: [:])) == WireAction.presenceUnsupported(4))
        #expect(!PhoenixChannels().capabilities.tracksPresence && Self.supabase.capabilities.tracksPresence)
    }
}

import ConnectionPolicy
import Foundation
@testable import SDK
import Testing

/// Supabase Realtime's layer on the Phoenix machine. The frames follow supabase/realtime's
/// `lib/realtime_web/channels/realtime_channel.ex` (v2.129: the join's `config` and
/// `access_token`, `system` messages via `push_system_message`, `shutdown_response` then
/// `{:stop, :normal}`, replayed broadcasts as `{"type","event","payload","meta":{"replayed",
/// "id"}}`) and `lib/realtime/messages.ex` (`replay`: `since` in Unix ms, at most 25), as read with
/// `search`; `../shared/research/protocol-adapters.md` §2.2–2.3.
@Suite("Supabase Realtime machine")
struct SupabaseMachineTests {
    /// The wall clock of the machines that do not move it (a test that does makes its own: the
    /// tests run in parallel).
    static let clock = Locked<Int64>(1_800_000_000_000)
    static var supabase: PhoenixChannels {
        PhoenixChannels(credentials: .none, supabase: .init(apiKey: "anon", now: { clock.withLock { $0 } }))
    }

    static func machine(token: String? = "user-jwt", continuing state: PhoenixSessionState? = nil, clock: Locked<Int64>? = nil) -> PhoenixChannels.Machine {
        let configuration = clock.map { clock in PhoenixChannels(credentials: .none, supabase: .init(apiKey: "anon", now: { clock.withLock { $0 } })) } ?? supabase
        var machine = PhoenixChannels.Machine(configuration: configuration, continuing: state)
        expectKinds(machine.start(credentials: token.map(Secret.init)), [.ready, .arm])
        return machine
    }

    static func payload(_ message: PhoenixMessage?) -> JSONValue? {
        if case .json(let payload)? = message?.payload { payload } else { nil }
    }

    static let privateRoom = Topic.supabase("room1", config: SupabaseChannelConfig(acknowledgesBroadcasts: true, presenceKey: "ann", isPrivate: true, replayLimit: 25))

    @Test("the join: realtime: topic, the config, the user's token as access_token (the API key without one)")
    func join() {
        var machine = Self.machine()
        let changes = [PostgresChangeFilter(event: "INSERT", table: "todos", filter: "id=eq.1")]
        let join = PhoenixMachineTests.frames(machine.perform(.subscribe(1, .supabase("room1", config: SupabaseChannelConfig(postgresChanges: changes)), resume: nil)))
        let config: JSONValue = [
            "broadcast": ["self": false, "ack": false], "presence": ["key": ""], "private": false,
            "postgres_changes": [["event": "INSERT", "schema": "public", "table": "todos", "filter": "id=eq.1"]],
        ]
        #expect(join == [PhoenixMachineTests.message("1", "1", "realtime:room1", "phx_join", ["config": config, "access_token": "user-jwt"])])
        var anonymous = Self.machine(token: nil)
        let plain = PhoenixMachineTests.frames(anonymous.perform(.subscribe(1, Topic("room2"), resume: nil)))
        #expect(plain.first?.topic == "realtime:room2")
        #expect(Self.payload(plain.first)?["access_token"] == "anon")
    }

    @Test("a new token is pushed to every joined channel as access_token, without a reconnect")
    func tokenRefresh() {
        var machine = PhoenixMachineTests.joined(Self.supabase, topic: Topic("room1"))
        let pushes = PhoenixMachineTests.frames(machine.perform(.credentials(Secret("fresh-jwt"))))
        #expect(pushes == [PhoenixMachineTests.message("1", "2", "realtime:room1", "access_token", ["access_token": "fresh-jwt"])])
        // The next join carries it too.
        let join = PhoenixMachineTests.frames(machine.perform(.subscribe(2, Topic("room2"), resume: nil)))
        #expect(Self.payload(join.first)?["access_token"] == "fresh-jwt")
        var phoenix = PhoenixMachineTests.joined()
        #expect(phoenix.perform(.credentials(Secret("fresh"))).isEmpty, "plain Phoenix reads the token at connect only")
    }

    @Test("a publish is a broadcast: acknowledged on a channel with ack, sent-unconfirmed at once without")
    func broadcastPublish() {
        var machine = PhoenixMachineTests.joined(Self.supabase, topic: Topic("room1"))
        let unacked = machine.perform(.publish(7, Topic("room1"), ["event": "cursor", "payload": ["x": 1]], key: nil))
        #expect(PhoenixMachineTests.frames(unacked) == [PhoenixMachineTests.message("1", "2", "realtime:room1", "broadcast",
                                                                                    ["type": "broadcast", "event": "cursor", "payload": ["x": 1]])])
        #expect(PhoenixMachineTests.others(unacked) == [.replied(7, .success(.sentUnconfirmed))])
        let elsewhere = machine.perform(.publish(9, Topic("room2"), ["event": "cursor"], key: nil))
        #expect(PhoenixMachineTests.others(elsewhere) == [.arm(WireTimer("phoenix-reply-3"), after: .seconds(5))], "a topic not joined: its refusal is awaited")
        #expect(PhoenixMachineTests.others(machine.receive(.text(#"[null,"3","realtime:room2","phx_reply",{"response":{"reason":"unmatched topic"},"status":"error"}]"#)))
            == [.cancel(WireTimer("phoenix-reply-3")), .replied(9, .failure(WireFailure(code: "error", message: "unmatched topic", payload: ["reason": "unmatched topic"])))])
        var acked = PhoenixMachineTests.joined(Self.supabase, topic: Self.privateRoom)
        let push = acked.perform(.publish(8, Topic("room1"), ["event": "cursor"], key: nil))
        #expect(PhoenixMachineTests.others(push) == [.arm(WireTimer("phoenix-reply-2"), after: .seconds(5))])
        #expect(acked.receive(.text(#"["1","2","realtime:room1","phx_reply",{"response":{},"status":"ok"}]"#))
            == [.cancel(WireTimer("phoenix-reply-2")), .replied(8, .success(.acknowledged(position: nil, payload: [:])))])
    }

    @Test("system messages are delivered; a channel error followed by the channel's close ends the subscription with its message")
    func systemMessages() {
        var machine = PhoenixMachineTests.joined(Self.supabase, topic: Topic("room1"))
        let subscribed = #"["1",null,"realtime:room1","system",{"channel":"room1","extension":"postgres_changes","message":"Subscribed to PostgreSQL","status":"ok"}]"#
        #expect(machine.receive(.text(subscribed)) == [.delivery(1, ["event": "system", "payload": [
            "channel": "room1", "extension": "postgres_changes", "message": "Subscribed to PostgreSQL", "status": "ok",
        ]], position: nil)])
        let shutdown = #"["1",null,"realtime:room1","system",{"channel":"room1","extension":"system","message":"Unable to connect to the project database","status":"error"}]"#
        #expect(machine.receive(.text(shutdown)).count == 1)
        #expect(machine.receive(.text(#"["1","1","realtime:room1","phx_close",{}]"#))
            == [.cancel(WireTimer("phoenix-rejoin-realtime:room1")), .subscriptionEnded(1, reason: "the channel closed: Unable to connect to the project database")])
    }

    @Test("replay on a private channel: the first join starts the position; the rejoin asks from the last broadcast less the margin, drops what it repeats by id, and is reported when the replay is over (presence_state)")
    func replay() throws {
        let clock = Locked<Int64>(1_800_000_000_000)
        var machine = Self.machine(clock: clock)
        expectKinds(machine.perform(.subscribe(1, Self.privateRoom, resume: nil)), [.send])
        #expect(machine.receive(.text(#"["1","1","realtime:room1","phx_reply",{"response":{},"status":"ok"}]"#))
            == [.subscribed(1, .live(at: .timestamp(milliseconds: 1_800_000_000_000)))])
        clock.withLock { $0 += 5_000 }
        let live = #"[null,null,"realtime:room1","broadcast",{"event":"msg","meta":{"id":"m1"},"payload":{"n":1},"type":"broadcast"}]"#
        #expect(machine.receive(.text(live)) == [.delivery(1, ["event": "broadcast", "payload": ["event": "msg", "meta": ["id": "m1"], "payload": ["n": 1], "type": "broadcast"]],
                                                           position: .timestamp(milliseconds: 1_800_000_005_000))])

        // The next socket: the session's state (the ids seen) carried over.
        let state = try machine.sessionState?.decoded(as: PhoenixSessionState.self)
        var next = Self.machine(continuing: state, clock: clock)
        let join = PhoenixMachineTests.frames(next.perform(.subscribe(1, Self.privateRoom, resume: .timestamp(milliseconds: 1_800_000_005_000))))
        #expect(Self.payload(join.first)?["config"]?["broadcast"]?["replay"] == ["since": JSONValue(Int64(1_799_999_945_000)), "limit": 25])
        #expect(join.first?.joinRef == "2", "refs go on across sockets: a new join_ref")
        #expect(next.receive(.text(#"["2","2","realtime:room1","phx_reply",{"response":{"postgres_changes":[]},"status":"ok"}]"#))
            == [.arm(WireTimer("phoenix-replay-end-realtime:room1"), after: .seconds(5))], "not reported before the replay is over")
        let repeated = #"["2",null,"realtime:room1","broadcast",{"event":"msg","meta":{"id":"m1","replayed":true},"payload":{"n":1},"type":"broadcast"}]"#
        #expect(next.receive(.text(repeated)).isEmpty, "delivered before the drop: dropped by its id")
        let missed = #"["2",null,"realtime:room1","broadcast",{"event":"msg","meta":{"id":"m2","replayed":true},"payload":{"n":2},"type":"broadcast"}]"#
        #expect(next.receive(.text(missed)).isEmpty, "held until the replay is over")
        let end = next.receive(.text(#"["2",null,"realtime:room1","presence_state",{}]"#))
        #expect(end == [
            .cancel(WireTimer("phoenix-replay-end-realtime:room1")),
            .subscribed(1, .resumeUnsupported),
            .delivery(1, ["event": "broadcast", "payload": ["event": "msg", "meta": ["id": "m2", "replayed": true], "payload": ["n": 2], "type": "broadcast"]],
                      position: .timestamp(milliseconds: 1_800_000_005_000)),
            .delivery(1, ["event": "presence", "payload": [:]], position: nil),
        ], "the replay reached back (m1 among it), but clients may broadcast here too: refetch, with the replayed broadcast delivered")
    }

    @Test("a rejoin without a replay (a public channel) is reported as refetch")
    func publicRejoin() {
        var machine = Self.machine()
        expectKinds(machine.perform(.subscribe(1, Topic("room1"), resume: .timestamp(milliseconds: 5))), [.send])
        #expect(machine.receive(.text(#"["1","1","realtime:room1","phx_reply",{"response":{},"status":"ok"}]"#)) == [.subscribed(1, .resumeUnsupported)])
    }

    @Test("the replay's ids are bounded: the oldest are forgotten past the limit")
    func idsBounded() {
        var state = PhoenixSessionState()
        let first = (0..<PhoenixSessionState.remembered).map { state.remember("id\($0)", on: "t", at: 0) }
        #expect(first.allSatisfy { $0 })
        let again = state.remember("id0", on: "t", at: 0)
        #expect(!again)
        let new = state.remember("new", on: "t", at: 0)
        #expect(new)
        let forgotten = state.remember("id0", on: "t", at: 0)
        #expect(forgotten, "forgotten once more than the limit came after it")
        let elsewhere = state.remember("id0", on: "other", at: 0)
        #expect(elsewhere, "per topic")
    }
}

import ConnectionPolicy
@testable import SDK
import Testing

/// A private channel's replay after a reconnect, judged once it is over: whether it reached back
/// (the last broadcast delivered is among what it brought), and whether it covers what the
/// channel carries (the database's broadcasts only: supabase-transcripts.md facts 11 and 12).
extension SupabaseMachineTests {
    static let replayEnd = WireTimer("phoenix-replay-end-realtime:room1")

    static func config(limit: Int = 25, origin: SupabaseBroadcastOrigin = .databaseOnly, changes: [PostgresChangeFilter] = []) -> Topic {
        .supabase("room1", config: SupabaseChannelConfig(postgresChanges: changes, isPrivate: true, replayLimit: limit, broadcastOrigin: origin))
    }

    /// A machine on a new socket that rejoined `topic` with a replay, after `delivered` ids were
    /// delivered (oldest first) on the earlier sockets; the join's reply has come.
    static func rejoined(_ topic: Topic, after delivered: [String], clientBroadcast: Bool = false) -> PhoenixChannels.Machine {
        var state = PhoenixSessionState()
        for id in delivered { _ = state.remember(id, on: "realtime:room1", at: 0) }
        if clientBroadcast { state.noteClientBroadcast(on: "realtime:room1") }
        var machine = Self.machine(continuing: state)
        expectKinds(machine.perform(.subscribe(1, topic, resume: .timestamp(milliseconds: 1_800_000_000_000))), [.send])
        let reply = machine.receive(.text(#"["1","1","realtime:room1","phx_reply",{"response":{"postgres_changes":[]},"status":"ok"}]"#))
        #expect(reply == [.arm(Self.replayEnd, after: .seconds(5))])
        return machine
    }

    static func replayed(_ id: String, n: Int = 0) -> TransportFrame {
        .text(#"["1",null,"realtime:room1","broadcast",{"event":"tick","meta":{"id":"\#(id)","replayed":true},"payload":{"n":\#(n)},"type":"broadcast"}]"#)
    }

    static let presenceState = TransportFrame.text(#"["1",null,"realtime:room1","presence_state",{}]"#)

    /// The ids of the broadcasts delivered, and the first action's outcome, among `actions`.
    static func summary(_ actions: [WireAction]) -> (outcome: SubscribeOutcome?, events: [String]) {
        var outcome: SubscribeOutcome?
        var events: [String] = []
        for action in actions {
            switch action {
            case .subscribed(_, let result): outcome = result
            case .delivery(_, let data, _):
                events.append(data["payload"]?["meta"]?["id"]?.stringValue ?? data["event"]?.stringValue ?? "?")
            default: break
            }
        }
        return (outcome, events)
    }

    @Test("after a relaunch: a replayed broadcast delivered before where the core resumed is dropped (finished); one delivered after it comes again flagged, at its position; a new one as new")
    func relaunchRedeliversWhatWasNotFinished() {
        var state = PhoenixSessionState()
        _ = state.remember("finished", on: "realtime:room1", at: 1_000)
        _ = state.remember("handed", on: "realtime:room1", at: 2_000)
        var machine = Self.machine(continuing: state)
        expectKinds(machine.perform(.subscribe(1, Self.config(), resume: .timestamp(milliseconds: 1_500))), [.send])
        _ = machine.receive(.text(#"["1","1","realtime:room1","phx_reply",{"response":{"postgres_changes":[]},"status":"ok"}]"#))
        for id in ["finished", "handed", "missed"] { #expect(machine.receive(Self.replayed(id)).isEmpty, "held until the replay is over") }
        let end = machine.receive(Self.presenceState)
        let messages = end.compactMap { action -> (String, Bool, StreamPosition?)? in
            switch action {
            case .delivery(_, let data, let position): (data["payload"]?["meta"]?["id"]?.stringValue ?? "?", false, position)
            case .redelivery(_, let data, let position): (data["payload"]?["meta"]?["id"]?.stringValue ?? "?", true, position)
            default: nil
            }
        }
        #expect(messages.map(\.0) == ["handed", "missed", "?"], "the finished one dropped; then presence")
        #expect(messages.first?.1 == true && messages.first?.2 == .timestamp(milliseconds: 2_000), "again, flagged, where it was")
        #expect(messages.dropFirst().first?.1 == false)
    }

    @Test("the replay reached back when the last broadcast delivered is among what it brought, wherever it stands (issue 34 §3: the first replayed was never received live; 8 of 25, no replay_gap)")
    func reachedBackFromTheWholeReplay() {
        var machine = Self.rejoined(Self.config(), after: ["a", "b"])
        #expect(machine.receive(Self.replayed("x")).isEmpty, "stored before it was broadcast live: new to this client, held")
        #expect(machine.receive(Self.replayed("b")).isEmpty, "the last delivered: a repeat, dropped")
        for id in ["c", "d", "e", "f", "g", "h"] { #expect(machine.receive(Self.replayed(id)).isEmpty) }
        let end = machine.receive(Self.presenceState)
        #expect(end.first == .cancel(Self.replayEnd))
        let summary = Self.summary(end)
        #expect(summary.outcome == .caughtUp(to: nil))
        #expect(summary.events == ["x", "c", "d", "e", "f", "g", "h", "presence"], "no replay_gap")
    }

    @Test("a replay cut at its limit (the last delivered not among it): a gap, with replay_gap before the replayed broadcasts (§7: limit 2 brings n 8 and 9)")
    func cutAtTheLimit() {
        var machine = Self.rejoined(Self.config(limit: 2), after: ["n3"])
        #expect(machine.receive(Self.replayed("n8", n: 8)).isEmpty)
        #expect(machine.receive(Self.replayed("n9", n: 9)).isEmpty)
        let end = machine.receive(Self.presenceState)
        #expect(Self.summary(end).outcome == .gap(at: nil))
        #expect(Self.summary(end).events == ["replay_gap", "n8", "n9", "presence"])
        guard case .delivery(1, let gap, nil) = end[2] else { Issue.record("no replay_gap: \(end)"); return }
        #expect(gap["payload"]?["limit"] == 2 && gap["payload"]?["replayed"] == 2)
    }

    @Test("a replay that brought fewer than its limit without the last delivered (the clocks apart): a gap too; nothing delivered before: nothing to reach back to")
    func clocksApartAndFresh() {
        var apart = Self.rejoined(Self.config(), after: ["z"])
        #expect(apart.receive(Self.replayed("a")).isEmpty)
        #expect(Self.summary(apart.receive(Self.presenceState)).outcome == .gap(at: nil))
        var fresh = Self.rejoined(Self.config(), after: [])
        #expect(fresh.receive(Self.replayed("a")).isEmpty)
        let end = fresh.receive(Self.presenceState)
        #expect(Self.summary(end).outcome == .caughtUp(to: nil))
        #expect(Self.summary(end).events == ["a", "presence"])
        var empty = Self.rejoined(Self.config(), after: ["z"])
        #expect(Self.summary(empty.receive(Self.presenceState)).outcome == .gap(at: nil), "nothing replayed, though z was delivered: it did not reach back")
    }

    @Test("the replay ends at the channel's first frame that is not a replayed broadcast (a live broadcast, a system message), or at the reply timeout")
    func replayEnds() {
        var live = Self.rejoined(Self.config(), after: ["a"])
        #expect(live.receive(Self.replayed("a")).isEmpty)
        let after = live.receive(.text(#"[null,null,"realtime:room1","broadcast",{"event":"tick","meta":{"id":"b"},"payload":{},"type":"broadcast"}]"#))
        #expect(Self.summary(after).outcome == .caughtUp(to: nil))
        #expect(Self.summary(after).events == ["b"])
        var system = Self.rejoined(Self.config(), after: ["a"])
        #expect(system.receive(Self.replayed("a")).isEmpty)
        let subscribed = system.receive(.text(#"["1",null,"realtime:room1","system",{"channel":"room1","extension":"postgres_changes","message":"Subscribed to PostgreSQL","status":"ok"}]"#))
        #expect(Self.summary(subscribed).events == ["system"])
        var silent = Self.rejoined(Self.config(), after: ["a"])
        #expect(silent.receive(Self.replayed("a")).isEmpty)
        #expect(silent.receive(Self.replayed("b")).isEmpty)
        let timedOut = silent.timerFired(Self.replayEnd)
        #expect(timedOut.first == .cancel(Self.replayEnd))
        #expect(Self.summary(timedOut).outcome == .caughtUp(to: nil) && Self.summary(timedOut).events == ["b"])
        #expect(silent.timerFired(Self.replayEnd).isEmpty, "once")
    }

    @Test("caught up only when the replay covers what the channel carries: clients' broadcasts (the default, or one seen) and database changes are never replayed: refetch")
    func coverage() {
        func outcome(_ topic: Topic, clientBroadcast: Bool = false) -> SubscribeOutcome? {
            var machine = Self.rejoined(topic, after: ["a"], clientBroadcast: clientBroadcast)
            #expect(machine.receive(Self.replayed("a")).isEmpty)
            return Self.summary(machine.receive(Self.presenceState)).outcome
        }
        #expect(outcome(Self.config()) == .caughtUp(to: nil))
        #expect(outcome(Self.config(origin: .clientsAndDatabase)) == .resumeUnsupported)
        #expect(outcome(Self.config(changes: [PostgresChangeFilter(table: "todos")])) == .resumeUnsupported)
        #expect(outcome(Self.config(), clientBroadcast: true) == .resumeUnsupported, "declared database-only, but a client's broadcast came")
    }

    @Test("a live broadcast without an id on a replayed channel (a client's: never stored) is noted for the next rejoin; one with an id is not")
    func clientBroadcastNoted() {
        var machine = Self.machine()
        expectKinds(machine.perform(.subscribe(1, Self.config(), resume: nil)), [.send])
        expectKinds(machine.receive(.text(#"["1","1","realtime:room1","phx_reply",{"response":{},"status":"ok"}]"#)), [.subscribed])
        expectKinds(machine.receive(.text(#"[null,null,"realtime:room1","broadcast",{"event":"tick","meta":{"id":"m1"},"payload":{"id":"m1"},"type":"broadcast"}]"#)), [.delivery])
        #expect(!(machine.session.sawClientBroadcast(on: "realtime:room1")))
        expectKinds(machine.receive(.text(#"[null,null,"realtime:room1","broadcast",{"event":"client","payload":{"n":"c2"},"type":"broadcast"}]"#)), [.delivery])
        #expect(machine.session.sawClientBroadcast(on: "realtime:room1"))
    }

    @Test("the broadcast origin is the client's to know: it is not part of the join's config")
    func originNotOnTheWire() {
        var machine = Self.machine()
        let join = PhoenixMachineTests.frames(machine.perform(.subscribe(1, Self.config(), resume: nil)))
        #expect(Self.payload(join.first)?["config"]?["broadcastOrigin"] == nil)
        #expect(Self.config().options?["broadcastOrigin"] == "database")
        #expect(Topic.supabase("room1", config: SupabaseChannelConfig(broadcastOrigin: .databaseOnly)).options?["broadcastOrigin"] == nil, "public: no replay")
    }
}

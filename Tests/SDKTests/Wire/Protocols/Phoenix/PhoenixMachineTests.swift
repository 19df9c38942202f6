import ConnectionPolicy
import Foundation
@testable import SDK
import Testing

/// The Phoenix machine, table by table, fed the frames a real Phoenix 1.7.24 server (Bandit
/// 1.11.1) sent: `../shared/research/phoenix-transcripts.md` §6 (the runs named in each test) and
/// §3 (the facts drawn from them).
@Suite("Phoenix machine")
struct PhoenixMachineTests {
    static let keepAlive = PhoenixChannels.keepAliveTimer

    /// The frames among `actions`, decoded; everything else as it is.
    static func frames(_ actions: [WireAction]) -> [PhoenixMessage] {
        actions.compactMap { action in
            guard case .send(let frame) = action else { return nil }
            return try? PhoenixMessage.decode(frame)
        }
    }

    static func others(_ actions: [WireAction]) -> [WireAction] {
        actions.filter { if case .send = $0 { false } else { true } }
    }

    static func message(_ joinRef: String?, _ ref: String?, _ topic: String, _ event: String, _ payload: JSONValue = [:]) -> PhoenixMessage {
        PhoenixMessage(joinRef: joinRef, ref: ref, topic: topic, event: event, payload: .json(payload))
    }

    /// A machine with `room:lobby` joined as subscription 1 (join_ref and ref "1").
    static func joined(_ configuration: PhoenixChannels = PhoenixChannels(), topic: Topic = Topic("room:lobby")) -> PhoenixChannels.Machine {
        var machine = configuration.makeMachine()
        expectKinds(machine.start(credentials: Secret("secret")), [.ready, .arm])
        expectKinds(machine.perform(.subscribe(1, topic, resume: nil)), [.send])
        let wire = machine.wireTopic(topic.name)
        expectKinds(machine.receive(.text(#"["1","1","\#(wire)","phx_reply",{"response":{},"status":"ok"}]"#)), [.subscribed])
        return machine
    }

    @Test("the socket is ready when open (Phoenix authorizes the upgrade) and the keep-alive starts")
    func readyAtOpen() {
        var machine = PhoenixChannels().makeMachine()
        #expect(machine.start(credentials: Secret("secret")) == [.ready, .arm(Self.keepAlive, after: .seconds(30))])
    }

    @Test("join: a fresh join_ref; the reply subscribes; presence_diff before presence_state waits for it (alice, §6 first run)")
    func joinAndPresence() throws {
        var machine = PhoenixChannels().makeMachine()
        expectKinds(machine.start(credentials: nil), [.ready, .arm])
        let join = machine.perform(.subscribe(1, .phoenix("room:lobby", params: ["hello": "from bob"]), resume: nil))
        #expect(Self.frames(join) == [Self.message("1", "1", "room:lobby", "phx_join", ["hello": "from bob"])])
        #expect(machine.receive(.text(#"["1","1","room:lobby","phx_reply",{"response":{"topic":"room:lobby","user":"alice"},"status":"ok"}]"#))
            == [.subscribed(1, .live(at: nil))])
        let diff = #"[null,null,"room:lobby","presence_diff",{"joins":{"alice":{"metas":[{"online_at":1795600092,"phx_ref":"GOtAxTtpb7vjAAOy"}]}},"leaves":{}}]"#
        #expect(machine.receive(.text(diff)).isEmpty, "a diff before this join's state waits for it")
        let state = #"["1",null,"room:lobby","presence_state",{"alice":{"metas":[{"online_at":1795600092,"phx_ref":"GOtAxTtpb7vjAAOy"}]}}]"#
        let alice: JSONValue = ["online_at": 1795600092, "phx_ref": "GOtAxTtpb7vjAAOy"]
        #expect(machine.receive(.text(state)) == [.delivery(1, ["event": "presence", "payload": ["alice": ["metas": [alice]]]], position: nil)],
                "the state, with the waiting diff applied on top: alice once")
        let bob: JSONValue = ["online_at": 1795600092, "phx_ref": "GOtAxVnHVh7jAAPC"]
        let bobJoins = #"[null,null,"room:lobby","presence_diff",{"joins":{"bob":{"metas":[{"online_at":1795600092,"phx_ref":"GOtAxVnHVh7jAAPC"}]}},"leaves":{}}]"#
        #expect(machine.receive(.text(bobJoins)) == [.delivery(1, ["event": "presence", "payload": ["alice": ["metas": [alice]], "bob": ["metas": [bob]]]], position: nil)])
        let aliceLeaves = #"[null,null,"room:lobby","presence_diff",{"joins":{},"leaves":{"alice":{"metas":[{"online_at":1795600092,"phx_ref":"GOtAxTtpb7vjAAOy"}]}}}]"#
        #expect(machine.receive(.text(aliceLeaves)) == [.delivery(1, ["event": "presence", "payload": ["bob": ["metas": [bob]]]], position: nil)])
    }

    @Test("a push: the channel's own broadcast comes before the reply that acknowledges it (alice's new_msg, §6)")
    func pushWithReply() {
        var machine = Self.joined()
        let push = machine.perform(.publish(9, Topic("room:lobby"), ["event": "new_msg", "payload": ["body": "hello"]], key: nil))
        #expect(Self.frames(push) == [Self.message("1", "2", "room:lobby", "new_msg", ["body": "hello"])])
        #expect(Self.others(push) == [.arm(WireTimer("phoenix-reply-2"), after: .seconds(5))])
        #expect(machine.receive(.text(#"[null,null,"room:lobby","new_msg",{"body":"hello","id":1,"user":"alice"}]"#))
            == [.delivery(1, ["event": "new_msg", "payload": ["body": "hello", "id": 1, "user": "alice"]], position: nil)])
        #expect(machine.receive(.text(#"["1","2","room:lobby","phx_reply",{"response":{"id":1},"status":"ok"}]"#))
            == [.cancel(WireTimer("phoenix-reply-2")), .replied(9, .success(.acknowledged(position: nil, payload: ["id": 1])))])
    }

    @Test("reply kinds (carol, §6): an error reply rejects with its reason; a push never answered is sent, not confirmed, after the bound")
    func replyKinds() {
        var machine = Self.joined()
        expectKinds(machine.perform(.publish(9, Topic("room:lobby"), ["event": "fail"], key: nil)), [.send, .arm])
        #expect(machine.receive(.text(#"["1","2","room:lobby","phx_reply",{"response":{"reason":"failed"},"status":"error"}]"#))
            == [.cancel(WireTimer("phoenix-reply-2")),
                .replied(9, .failure(WireFailure(code: "error", message: "failed", payload: ["reason": "failed"])))])
        expectKinds(machine.perform(.publish(10, Topic("room:lobby"), ["event": "silent"], key: nil)), [.send, .arm])
        #expect(machine.timerFired(WireTimer("phoenix-reply-3")) == [.replied(10, .success(.sentUnconfirmed))])
        #expect(machine.receive(.text(#"["1","3","room:lobby","phx_reply",{"response":{},"status":"ok"}]"#)).isEmpty, "a late reply changes nothing")
    }

    @Test("a push to a topic not joined: the server's 'unmatched topic' error rejects it (alice's push after leave, §6)")
    func pushToTopicNotJoined() {
        var machine = PhoenixChannels().makeMachine()
        expectKinds(machine.start(credentials: nil), [.ready, .arm])
        let push = machine.perform(.publish(4, Topic("room:lobby"), ["event": "new_msg", "payload": ["body": "after leave"]], key: nil))
        #expect(Self.frames(push) == [Self.message(nil, "1", "room:lobby", "new_msg", ["body": "after leave"])])
        let actions = machine.receive(.text(#"[null,"1","room:lobby","phx_reply",{"response":{"reason":"unmatched topic"},"status":"error"}]"#))
        #expect(Self.others(actions).last == .replied(4, .failure(WireFailure(code: "error", message: "unmatched topic", payload: ["reason": "unmatched topic"]))))
    }

    @Test("binary frames (carol, §6): a binary broadcast is delivered with its bytes in base64")
    func binaryBroadcast() {
        var machine = Self.joined(topic: Topic("room:2"))
        #expect(machine.receive(.binary([UInt8](hex: "02060d726f6f6d3a3262696e5f62726f616463617374000102ff")))
            == [.delivery(1, ["event": "bin_broadcast", "payload": ["binary": "AAEC/w=="]], position: nil)])
    }

    @Test("a binary broadcast as a real Phoenix 1.7.24 sends it (Endpoint.broadcast! with {:binary, <<0,1,255,123>>}): payload.binary in base64")
    func binaryBroadcastFromPhoenix1_7() {
        var machine = Self.joined(topic: Topic("room:bin"))
        // Kind 2 (broadcast), topic length 8, event length 4, "room:bin", "blob", the bytes.
        #expect(machine.receive(.binary([2, 8, 4] + Array("room:bin".utf8) + Array("blob".utf8) + [0, 1, 255, 123]))
            == [.delivery(1, ["event": "blob", "payload": ["binary": "AAH/ew=="]], position: nil)])
    }

    @Test("the 101st channel on a default Phoenix socket: refused with \"too many channels joined\", reported as a rejection")
    func tooManyChannels() {
        var machine = Self.joined(topic: Topic("room:1"))
        expectKinds(machine.perform(.subscribe(2, Topic("room:101"), resume: nil)), [.send])
        #expect(Self.others(machine.receive(.text(#"["2","2","room:101","phx_reply",{"response":{"reason":"too many channels joined"},"status":"error"}]"#)))
            == [.cancel(WireTimer("phoenix-rejoin-room:101")),
                .subscriptionFailed(2, WireFailure(code: "error", message: "too many channels joined", payload: ["reason": "too many channels joined"]))])
    }

    @Test("join refused: by the channel (with its join_ref) and for an unknown topic (join_ref null) (dave, §6)")
    func joinRefused() {
        var machine = PhoenixChannels().makeMachine()
        expectKinds(machine.start(credentials: nil), [.ready, .arm])
        expectKinds(machine.perform(.subscribe(1, Topic("nope:1"), resume: nil)), [.send])
        #expect(machine.receive(.text(#"[null,"1","nope:1","phx_reply",{"response":{"reason":"unmatched topic"},"status":"error"}]"#))
            == [.cancel(WireTimer("phoenix-rejoin-nope:1")), .subscriptionFailed(1, WireFailure(code: "error", message: "unmatched topic", payload: ["reason": "unmatched topic"]))])
        expectKinds(machine.perform(.subscribe(2, .phoenix("room:x", params: ["reject": "not allowed"]), resume: nil)), [.send])
        #expect(Self.others(machine.receive(.text(#"["2","2","room:x","phx_reply",{"response":{"reason":"not allowed"},"status":"error"}]"#)))
            == [.cancel(WireTimer("phoenix-rejoin-room:x")), .subscriptionFailed(2, WireFailure(code: "error", message: "not allowed", payload: ["reason": "not allowed"]))])
    }

    @Test("a crashed channel (carol's crash, §6): phx_error is delivered, the rejoin goes after 1 s with a new join_ref, the old join's frames are dropped")
    func crashAndRejoin() {
        var machine = Self.joined(topic: Topic("room:2"))
        expectKinds(machine.perform(.publish(9, Topic("room:2"), ["event": "crash"], key: nil)), [.send, .arm])
        #expect(machine.receive(.text(#"["1","1","room:2","phx_error",{}]"#))
            == [.arm(WireTimer("phoenix-rejoin-room:2"), after: .seconds(1)), .delivery(1, ["event": "phx_error", "payload": [:]], position: nil)])
        let rejoin = machine.timerFired(WireTimer("phoenix-rejoin-room:2"))
        #expect(Self.frames(rejoin) == [Self.message("3", "3", "room:2", "phx_join")])
        #expect(Self.others(rejoin) == [.arm(WireTimer("phoenix-rejoin-room:2"), after: .seconds(10))], "a rejoin unanswered in twice the reply bound is retried")
        #expect(machine.receive(.text(#"["3","3","room:2","phx_reply",{"response":{"topic":"room:2","user":"carol"},"status":"ok"}]"#))
            == [.cancel(WireTimer("phoenix-rejoin-room:2"))], "the session's subscription goes on: nothing to re-report")
        #expect(machine.receive(.text(#"["1","1","room:2","phx_close",{}]"#)).isEmpty, "the old join's close: stale")
        #expect(machine.receive(.text(#"["1",null,"room:2","news",{}]"#)).isEmpty, "the old join's push: stale")
        #expect(machine.receive(.text(#"["3",null,"room:2","news",{}]"#)) == [.delivery(1, ["event": "news", "payload": [:]], position: nil)])
        // {:stop, :normal}: the channel closes for good.
        #expect(machine.receive(.text(#"["3","3","room:2","phx_close",{}]"#))
            == [.cancel(WireTimer("phoenix-rejoin-room:2")), .subscriptionEnded(1, reason: "the server closed the channel (phx_close)")])
    }

    @Test("rejoins back off 1, 2, 5, then 10 s while unanswered; a refused rejoin ends the subscription")
    func rejoinBackoff() {
        var machine = Self.joined()
        expectKinds(machine.receive(.text(#"["1","1","room:lobby","phx_error",{}]"#)), [.arm, .delivery])
        let timer = WireTimer("phoenix-rejoin-room:lobby")
        var delays: [Duration] = []
        for _ in 0..<4 {
            expectKinds(machine.timerFired(timer), [.send, .arm])  // the rejoin goes
            for case .arm(_, let delay) in machine.timerFired(timer) { delays.append(delay) }  // unanswered
        }
        #expect(delays == [.seconds(2), .seconds(5), .seconds(10), .seconds(10)])
        let rejoin = Self.frames(machine.timerFired(timer))
        let joinRef = rejoin.first?.joinRef ?? ""
        #expect(Self.others(machine.receive(.text(#"["\#(joinRef)","\#(joinRef)","room:lobby","phx_reply",{"response":{"reason":"gone"},"status":"error"}]"#)))
            == [.cancel(timer), .subscriptionFailed(1, WireFailure(code: "error", message: "gone", payload: ["reason": "gone"]))])
    }

    @Test("leave: phx_leave with the join's join_ref; the reply, the close and a late presence_diff for the topic are dropped (alice's leave, §6)")
    func leave() {
        var machine = Self.joined()
        let leave = machine.perform(.unsubscribe(1))
        #expect(Self.frames(leave) == [Self.message("1", "2", "room:lobby", "phx_leave")])
        #expect(machine.receive(.text(#"["1","2","room:lobby","phx_reply",{"response":{},"status":"ok"}]"#)).isEmpty)
        #expect(machine.receive(.text(#"["1","1","room:lobby","phx_close",{}]"#)).isEmpty)
        #expect(machine.receive(.text(#"[null,null,"room:lobby","presence_diff",{"joins":{},"leaves":{}}]"#)).isEmpty)
    }

    @Test("messages before the join's reply are held and delivered after the subscription")
    func heldUntilJoined() {
        var machine = PhoenixChannels().makeMachine()
        expectKinds(machine.start(credentials: nil), [.ready, .arm])
        expectKinds(machine.perform(.subscribe(1, Topic("room:z"), resume: nil)), [.send])
        #expect(machine.receive(.text(#"[null,null,"room:z","news",{"n":1}]"#)).isEmpty)
        #expect(machine.receive(.text(#"["1","1","room:z","phx_reply",{"response":{},"status":"ok"}]"#))
            == [.subscribed(1, .live(at: nil)), .delivery(1, ["event": "news", "payload": ["n": 1]], position: nil)])
    }

    @Test("a resubscribe on a new socket is reported as refetch: Phoenix cannot resume")
    func resubscribeIsRefetch() {
        var machine = PhoenixChannels().makeMachine()
        expectKinds(machine.start(credentials: nil), [.ready, .arm])
        expectKinds(machine.perform(.subscribe(1, Topic("room:r"), resume: .sequence(3))), [.send])
        #expect(machine.receive(.text(#"["1","1","room:r","phx_reply",{"response":{},"status":"ok"}]"#)) == [.subscribed(1, .resumeUnsupported)])
    }

    @Test("the keep-alive: a heartbeat on topic phoenix; answered, the next one goes; unanswered at the next beat, the connection ends")
    func keepAlive() {
        var machine = Self.joined()
        let beat = machine.timerFired(Self.keepAlive)
        #expect(Self.frames(beat) == [Self.message(nil, "2", "phoenix", "heartbeat")])
        #expect(Self.others(beat) == [.arm(Self.keepAlive, after: .seconds(30))])
        #expect(machine.receive(.text(#"[null,"2","phoenix","phx_reply",{"response":{},"status":"ok"}]"#)).isEmpty)
        #expect(Self.frames(machine.timerFired(Self.keepAlive)) == [Self.message(nil, "3", "phoenix", "heartbeat")])
        let ending = machine.timerFired(Self.keepAlive)
        #expect(ending == [.cancel(Self.keepAlive), .end(WireEnding(
            DisconnectReason(.networkLost, detail: "no reply to the Phoenix heartbeat within 30.0 seconds: the connection is half-open"), .retry))])
    }

    @Test("a stretched keep-alive: ×2 before the start beats every 50 s, not 60 (Phoenix closes at 60 s); back to ×1 it is armed again at 30 s; a beat in flight is left alone")
    func keepAliveStretched() {
        var machine = PhoenixChannels().makeMachine()
        #expect(machine.keepAliveStretched(by: 2).isEmpty, "not started: nothing armed yet")
        #expect(Self.others(machine.start(credentials: nil)) == [.ready, .arm(Self.keepAlive, after: .seconds(50))])
        #expect(machine.keepAliveStretched(by: 1) == [.arm(Self.keepAlive, after: .seconds(30))])
        #expect(machine.keepAliveStretched(by: 1).isEmpty, "no change")
        _ = machine.timerFired(Self.keepAlive)
        #expect(machine.keepAliveStretched(by: 3).isEmpty, "a beat awaits its reply: its deadline stands")
        var long = PhoenixChannels(keepAlive: .seconds(55)).makeMachine()
        _ = long.keepAliveStretched(by: 2)
        #expect(Self.others(long.start(credentials: nil)) == [.ready, .arm(Self.keepAlive, after: .seconds(55))], "a configured longer one is kept")
    }

    @Test("ping: a heartbeat whose reply answers it (a numeric ref echoed as a number still matches, dave §6); it puts the keep-alive off")
    func ping() {
        var machine = Self.joined()
        let ping = machine.perform(.ping(5))
        #expect(Self.frames(ping) == [Self.message(nil, "2", "phoenix", "heartbeat")])
        #expect(Self.others(ping) == [.arm(Self.keepAlive, after: .seconds(30))])
        #expect(machine.receive(.text(#"[null,2,"phoenix","phx_reply",{"response":{},"status":"ok"}]"#))
            == [.replied(5, .success(.acknowledged(position: nil, payload: nil)))])
    }

    @Test("a frame that is not a V2 message ends the connection as a protocol error, retried")
    func garbage() {
        var machine = Self.joined()
        let actions = machine.receive(.text("this is not json"))
        guard case .end(let ending)? = actions.last else { Issue.record("no end: \(actions)"); return }
        #expect(ending.disposition == .retry && ending.closeCode == .protocolError)
        #expect(machine.receive(.text(#"[null,null,"room:lobby","news",{}]"#)).isEmpty, "nothing after the end")
    }

    @Test("goodbye: phx_leave for every joined topic, then nothing")
    func goodbye() {
        var machine = Self.joined()
        let goodbye = machine.perform(.goodbye)
        #expect(Self.frames(goodbye) == [Self.message("1", "2", "room:lobby", "phx_leave")])
        #expect(machine.timerFired(Self.keepAlive).isEmpty)
    }

    @Test("a publish whose data names no event, or a reserved one, is refused before it is queued")
    func publishChecks() {
        let phoenix = PhoenixChannels()
        #expect(phoenix.encodingProblem(publishing: ["body": "x"], to: "room:1", key: "k")?.contains("no event name") == true)
        #expect(phoenix.encodingProblem(publishing: ["event": "phx_join"], to: "room:1", key: "k")?.contains("reserves") == true)
        #expect(phoenix.encodingProblem(publishing: ["event": "new_msg"], to: "room:1", key: "k") == nil)
    }
}

import ConnectionPolicy
import SDK
import SDKTesting
import Testing

/// Tether's own protocol as an adapter machine, table by table — and against `ServerCore`, the
/// reference server's rules, frame for frame.
@Suite("Tether protocol machine")
struct TetherProtocolTests {
    let codec = JSONWireCodec()

    /// The client messages sent among `actions`; every other action must be exactly `others`.
    func sent(_ actions: [WireAction], besides others: [WireAction] = [], sourceLocation: SourceLocation = #_sourceLocation) -> [ClientMessage] {
        frames(of: actions, besides: others, sourceLocation: sourceLocation).compactMap { try? codec.decodeClientMessage($0) }
    }

    func frame(_ message: ServerMessage) -> TransportFrame { try! codec.encode(message) }

    func ready() -> TetherProtocol.Machine {
        var machine = TetherProtocol().makeMachine()
        expectKinds(machine.start(credentials: Secret("t")), [.send, .pipelining])
        expectKinds(machine.receive(frame(.ack(Ack(id: 1)))), [.ready])
        return machine
    }

    @Test("auth first, with the token; its ok makes it ready")
    func handshake() {
        var machine = TetherProtocol().makeMachine()
        #expect(sent(machine.start(credentials: Secret("t")), besides: [.pipelining]) == [.authenticate(id: 1, token: Secret("t"))])
        #expect(machine.receive(frame(.ack(Ack(id: 1)))) == [.ready])
    }

    @Test("pipelined: requests go out right behind auth, in order; its ok makes it ready, then the replies come")
    func pipelined() {
        var machine = TetherProtocol(handshake: .pipelined).makeMachine()
        let start = machine.start(credentials: Secret("t"))
        #expect(sent(start, besides: [.pipelining]) == [.authenticate(id: 1, token: Secret("t"))])
        #expect(start.last == .pipelining)
        #expect(sent(machine.perform(.subscribe(7, Topic("room"), resume: .sequence(4)))) == [.subscribe(id: 2, channel: "room", since: 4)])
        #expect(sent(machine.perform(.publish(9, Topic("room"), "hi", key: "k"))) == [.publish(id: 3, channel: "room", data: "hi", key: "k")])
        #expect(machine.receive(frame(.ack(Ack(id: 1)))) == [.ready])
        #expect(machine.receive(frame(.ack(Ack(id: 2, sequence: 6)))) == [.subscribed(7, .caughtUp(to: .sequence(6)))])
        #expect(machine.receive(frame(.ack(Ack(id: 3, sequence: 7)))) == [.replied(9, .success(.acknowledged(position: .sequence(7), payload: nil)))])
    }

    @Test("de-duplication is the machine's: a message at or below what the subscription delivered or resumed after is dropped; a restarted server's numbering starts over")
    func duplicatesDropped() {
        var machine = ready()
        expectKinds(machine.perform(.subscribe(7, Topic("room"), resume: .sequence(5))), [.send])
        #expect(machine.receive(frame(.ack(Ack(id: 2, sequence: 8)))) == [.subscribed(7, .caughtUp(to: .sequence(8)))])
        func message(_ sequence: UInt64, _ channel: String = "room") -> TransportFrame {
            frame(.message(ChannelMessage(channel: channel, sequence: sequence, data: JSONValue(sequence))))
        }
        #expect(machine.receive(message(5)) == [], "at the resume position: already delivered")
        #expect(machine.receive(message(6)) == [.delivery(7, 6, position: .sequence(6))])
        #expect(machine.receive(message(6)) == [], "twice")
        #expect(machine.receive(message(7)) == [.delivery(7, 7, position: .sequence(7))])
        // A server that restarted and lost its history: latest 2, below the 10 resumed after.
        expectKinds(machine.perform(.subscribe(8, Topic("other"), resume: .sequence(10))), [.send])
        #expect(machine.receive(frame(.ack(Ack(id: 3, sequence: 2)))) == [.subscribed(8, .caughtUp(to: .sequence(2)))])
        #expect(machine.receive(message(3, "other")) == [.delivery(8, 3, position: .sequence(3))], "its new numbering is not dropped")
    }

    @Test("a channel left and subscribed again: a message of the earlier subscription still on the way before the new one's ok is dropped, so the catch-up after the ok is delivered whole")
    func staleMessageBeforeOk() {
        var machine = ready()
        expectKinds(machine.perform(.subscribe(7, Topic("room"), resume: nil)), [.send])
        #expect(machine.receive(frame(.ack(Ack(id: 2, sequence: 0)))) == [.subscribed(7, .live(at: .sequence(0)))])
        func message(_ sequence: UInt64) -> TransportFrame { frame(.message(ChannelMessage(channel: "room", sequence: sequence, data: JSONValue(sequence)))) }
        #expect(machine.receive(message(1)) == [.delivery(7, 1, position: .sequence(1))])
        expectKinds(machine.perform(.unsubscribe(7)), [.send])
        expectKinds(machine.perform(.subscribe(8, Topic("room"), resume: .sequence(1))), [.send])
        #expect(machine.receive(message(2)) == [], "the earlier subscription's, before the new one's ok")
        #expect(machine.receive(frame(.ack(Ack(id: 3)))) == [])
        #expect(machine.receive(frame(.ack(Ack(id: 4, sequence: 3)))) == [.subscribed(8, .caughtUp(to: .sequence(3)))])
        #expect(machine.receive(message(2)) == [.delivery(8, 2, position: .sequence(2))], "the catch-up: not taken for a duplicate")
        #expect(machine.receive(message(3)) == [.delivery(8, 3, position: .sequence(3))])
    }

    @Test("after authentication: requests wait for auth's ok, then go out in order")
    func afterAuthentication() {
        var machine = TetherProtocol(handshake: .afterAuthentication).makeMachine()
        #expect(machine.start(credentials: Secret("t")).contains(.pipelining) == false)
        #expect(machine.perform(.subscribe(7, Topic("room"), resume: nil)) == [])
        let ready = machine.receive(frame(.ack(Ack(id: 1))))
        #expect(ready.first == .ready)
        #expect(sent(ready, besides: [.ready]) == [.subscribe(id: 2, channel: "room", since: nil)])
    }

    @Test("rejected credentials behind pipelined requests: the connection ends, not retried, and no request is answered")
    func pipelinedRejected() {
        var machine = TetherProtocol(handshake: .pipelined).makeMachine()
        expectKinds(machine.start(credentials: Secret("bad")), [.send, .pipelining])
        expectKinds(machine.perform(.subscribe(7, Topic("room"), resume: nil)), [.send])
        expectKinds(machine.perform(.publish(9, Topic("room"), "hi", key: "k")), [.send])
        let actions = machine.receive(frame(.error(ServerError(id: 1, code: "unauthorized", message: "credentials rejected"))))
        #expect(actions == [.end(WireEnding(DisconnectReason(.credentialsRejected, detail: "credentials rejected"), .doNotRetry))])
        #expect(machine.receive(frame(.ack(Ack(id: 3, sequence: 1)))) == [], "nothing after the end")
    }

    @Test("rejected credentials end the connection, no retry; another auth error is retried")
    func authErrors() {
        var rejected = TetherProtocol().makeMachine()
        expectKinds(rejected.start(credentials: Secret("bad")), [.send, .pipelining])
        let actions = rejected.receive(frame(.error(ServerError(id: 1, code: "unauthorized", message: "credentials rejected"))))
        #expect(actions == [.end(WireEnding(DisconnectReason(.credentialsRejected, detail: "credentials rejected"), .doNotRetry))])
        var other = TetherProtocol().makeMachine()
        expectKinds(other.start(credentials: nil), [.send, .pipelining])
        guard case .end(let ending)? = other.receive(frame(.error(ServerError(id: nil, code: "bad_request", message: "x")))).first else {
            Issue.record("not ended")
            return
        }
        #expect(ending.disposition == .retry)
    }

    @Test("subscribe: live from the server's latest; a resumed one caught up, or with a gap")
    func subscribeOutcomes() {
        var machine = ready()
        #expect(sent(machine.perform(.subscribe(7, Topic("room"), resume: nil))) == [.subscribe(id: 2, channel: "room", since: nil)])
        #expect(machine.receive(frame(.ack(Ack(id: 2, sequence: 40)))) == [.subscribed(7, .live(at: .sequence(40)))])
        #expect(sent(machine.perform(.subscribe(8, Topic("news"), resume: .sequence(3)))) == [.subscribe(id: 3, channel: "news", since: 3)])
        #expect(machine.receive(frame(.ack(Ack(id: 3, sequence: 9)))) == [.subscribed(8, .caughtUp(to: .sequence(9)))])
        expectKinds(machine.perform(.subscribe(9, Topic("old"), resume: .sequence(1))), [.send])
        #expect(machine.receive(frame(.ack(Ack(id: 4, sequence: 5000, gap: true)))) == [.subscribed(9, .gap(at: .sequence(5000)))])
    }

    @Test("messages are delivered to their channel's subscription with their sequence number")
    func deliveries() {
        var machine = ready()
        expectKinds(machine.perform(.subscribe(7, Topic("room"), resume: nil)), [.send])
        expectKinds(machine.receive(frame(.ack(Ack(id: 2, sequence: 40)))), [.subscribed])
        #expect(machine.receive(frame(.message(ChannelMessage(channel: "room", sequence: 41, data: "hi")))) == [.delivery(7, "hi", position: .sequence(41))])
        #expect(machine.receive(frame(.message(ChannelMessage(channel: "other", sequence: 1, data: "x")))) == [])
    }

    @Test("publish carries its key; its ok is the acknowledgement with the message's number; an error names the request")
    func publish() {
        var machine = ready()
        #expect(sent(machine.perform(.publish(30, Topic("room"), "hi", key: "k1"))) == [.publish(id: 2, channel: "room", data: "hi", key: "k1")])
        #expect(machine.receive(frame(.ack(Ack(id: 2, sequence: 5)))) == [.replied(30, .success(.acknowledged(position: .sequence(5), payload: nil)))])
        expectKinds(machine.perform(.publish(31, Topic("room"), "too big", key: nil)), [.send])
        #expect(machine.receive(frame(.error(ServerError(id: 3, code: "too_large", message: "no")))) == [.replied(31, .failure(WireFailure(code: "too_large", message: "no")))])
    }

    @Test("a publish the codec refuses fails at once, nothing sent")
    func publishTooDeep() {
        var machine = ready()
        let deep = (0..<40).reduce(JSONValue.null) { inner, _ in .array([inner]) }
        #expect(machine.perform(.publish(30, Topic("room"), deep, key: nil)) == [.replied(30, .failure(WireFailure(code: "encoding_failed", message: "the message cannot be encoded within the protocol's limits")))])
    }

    @Test("ping is the probe: its pong replies")
    func ping() {
        var machine = ready()
        #expect(sent(machine.perform(.ping(50))) == [.ping(id: 2)])
        #expect(machine.receive(frame(.pong(id: 2))) == [.replied(50, .success(.acknowledged(position: nil, payload: nil)))])
    }

    @Test("the frames of one read: the actions frame by frame would give, in order, and none after a bad frame")
    func framesOfOneRead() {
        var machine = ready()
        expectKinds(machine.perform(.subscribe(7, Topic("room"), resume: nil)), [.send])
        expectKinds(machine.perform(.subscribe(8, Topic("news"), resume: .sequence(3))), [.send])
        expectKinds(machine.perform(.publish(30, Topic("room"), "hi", key: nil)), [.send])
        let read: [TransportFrame] = [
            frame(.ack(Ack(id: 2, sequence: 40))),
            frame(.message(ChannelMessage(channel: "room", sequence: 41, data: "a"))),
            frame(.message(ChannelMessage(channel: "other", sequence: 1, data: "not ours"))),
            frame(.message(ChannelMessage(channel: "room", sequence: 42, data: "b"))),
            frame(.ack(Ack(id: 3, sequence: 9))),
            frame(.pong(id: 99)),
            frame(.error(ServerError(id: 4, code: "too_large", message: "no"))),
            frame(.message(ChannelMessage(channel: "news", sequence: 10, data: "c"))),
            .text("garbage"),
            frame(.message(ChannelMessage(channel: "room", sequence: 43, data: "after the bad frame"))),
        ]
        var oneByOne = machine
        let expected = read.flatMap { oneByOne.receive($0) }
        let actions = machine.receive(contentsOf: read)
        #expect(actions.flatMap(\.oneByOne) == expected, "the same, a run's messages as one action")
        #expect(actions.count == 7, "\(actions)")
        guard case .end(let ending)? = actions.last else {
            Issue.record("the bad frame did not end the connection: \(actions)")
            return
        }
        #expect(ending.disposition == .retry)
        #expect(machine.receive(contentsOf: [frame(.message(ChannelMessage(channel: "room", sequence: 44, data: "later")))]) == [])
    }

    @Test("a bad frame ends the connection, retried")
    func badFrame() {
        var machine = ready()
        guard case .end(let ending)? = machine.receive(.text("garbage")).first else {
            Issue.record("not ended")
            return
        }
        #expect(ending.disposition == .retry)
    }

    @Test("close codes keep their documented meaning")
    func closeCodes() {
        #expect(TetherProtocol.ending(code: .unauthorized, reason: "").reason.code == .credentialsRejected)
        #expect(TetherProtocol.ending(code: .unauthorized, reason: "").disposition == .doNotRetry)
        #expect(TetherProtocol.ending(code: .badRequest, reason: "").disposition == .doNotRetry)
        #expect(TetherProtocol.ending(code: .retryAfter, reason: "retry-after-ms=250").disposition == .retryAfter(.milliseconds(250)))
        #expect(TetherProtocol.ending(code: .slowConsumer, reason: "").disposition == .retry)
        #expect(TetherProtocol.ending(code: nil, reason: "reset").reason.code == .networkLost)
    }

    @Test("against ServerCore, frame for frame: auth, subscribe with a catch-up, publish, deliveries")
    func againstServerCore() {
        var server = ServerCore(.init(tokens: ["t"]), now: { .zero })
        server.connectionOpened(1)
        var machine = TetherProtocol().makeMachine()
        var delivered: [WireAction] = []
        func carry(_ actions: [WireAction]) {
            for action in actions {
                if case .send(let frame) = action {
                    for case .send(1, let reply) in server.received(frame, from: 1) { carry(machine.receive(reply)) }
                } else {
                    delivered.append(action)
                }
            }
        }
        _ = try? server.publish("before-1", to: "room")
        _ = try? server.publish("before-2", to: "room")
        carry(machine.start(credentials: Secret("t")))
        carry(machine.perform(.subscribe(7, Topic("room"), resume: .sequence(1))))
        carry(machine.perform(.publish(9, Topic("room"), "mine", key: "k")))
        // `auth` is answered within `start` here, so `ready` comes before `pipelining`.
        #expect(delivered == [
            .ready,
            .pipelining,
            .subscribed(7, .caughtUp(to: .sequence(2))),
            .delivery(7, "before-2", position: .sequence(2)),
            .replied(9, .success(.acknowledged(position: .sequence(3), payload: nil))),
            .delivery(7, "mine", position: .sequence(3)),
        ])
    }
}

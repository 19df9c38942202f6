import ConnectionPolicy
import SDK
import SDKTesting
import Testing

/// Version 3's resumed set answered as a set: the `resume_set` frame says, for each wanted
/// member in the set's order, how far its channel's latest is from the position the client sent
/// and whether it has a gap; the machine answers each member as its `ok` would have. A server
/// whose answer does not fit the set ends the socket as a server's fault.
extension TetherResumeSetTests {
    /// A version-3 machine whose upgrade carried `room` (since 41), `news` (since 3) and `live`
    /// (no position) by the kept set, each claimed by the core: ids 1 … 3 in canonical order
    /// (live, news, room), subscriptions 72, 71, 70.
    func claimedSet() -> any WireMachine {
        let state = kept("T1", [member("room", 40), member("news", 3), member("live", 9)])
        let handshake = TetherProtocol().handshake(endpoint: endpoint, credentials: nil, resuming: resume([("room", 41), ("news", 3), ("live", nil)]), continuing: state)
        var machine = TetherProtocol().makeConnectionMachine(continuing: state, handshake: handshake, subprotocol: "tether.v3")
        _ = machine.start(credentials: nil)
        _ = machine.perform(.subscribe(70, Topic("room"), resume: .sequence(41)))
        _ = machine.perform(.subscribe(71, Topic("news"), resume: .sequence(3)))
        _ = machine.perform(.subscribe(72, Topic("live"), resume: nil))
        return machine
    }

    @Test("each member is answered from its own since (a live one from 0), a gap where the server says so, in the set's order")
    func answersEachMember() {
        var machine = claimedSet()
        var answers = TetherResumeSet.Answers()
        answers.append(latest: 12, from: 0, gap: false)  // live: its latest as it is
        answers.append(latest: 3, from: 3, gap: false)  // news: nothing missed
        answers.append(latest: 90, from: 41, gap: true)  // room: 49 missed, the server no longer has them all
        #expect(answers.codes == [24, 0, 98] && answers.gaps == [2])
        #expect(machine.receive(frame(.resumeSet(token: "T2", resumed: true, answers: answers))) == [
            .subscribed(72, .live(at: .sequence(12))), .subscribed(71, .caughtUp(to: .sequence(3))), .subscribed(70, .gap(at: .sequence(90))),
        ])
        #expect(machine.receive(frame(.message(ChannelMessage(channel: "room", sequence: 90, data: "x")))) == [.delivery(70, "x", position: .sequence(90))])
        #expect(machine.receive(frame(.message(ChannelMessage(channel: "news", sequence: 3, data: "old")))) == [], "at or below what was answered: a duplicate")
    }

    @Test("a latest below the since the client sent is read as such (a server that lost history): the member goes on from there")
    func latestBelowSince() {
        var machine = claimedSet()
        var answers = TetherResumeSet.Answers()
        answers.append(latest: 0, from: 0, gap: false)
        answers.append(latest: 1, from: 3, gap: false)
        answers.append(latest: 41, from: 41, gap: false)
        #expect(answers.codes == [0, 3, 0])
        #expect(machine.receive(frame(.resumeSet(token: "T2", resumed: true, answers: answers))) == [
            .subscribed(72, .live(at: .sequence(0))), .subscribed(71, .caughtUp(to: .sequence(1))), .subscribed(70, .caughtUp(to: .sequence(41))),
        ])
        #expect(machine.receive(frame(.message(ChannelMessage(channel: "news", sequence: 2, data: "new")))) == [.delivery(71, "new", position: .sequence(2))])
    }

    @Test("an answer that does not fit the set ends the socket: too few members, too many, a latest below zero, no answers at all", arguments: [
        TetherResumeSet.Answers(codes: [0, 0], gaps: []), TetherResumeSet.Answers(codes: [0, 0, 0, 0], gaps: []),
        TetherResumeSet.Answers(codes: [1, 0, 0], gaps: []), nil,
    ] as [TetherResumeSet.Answers?])
    func answerThatDoesNotFit(answers: TetherResumeSet.Answers?) {
        var machine = claimedSet()
        let actions = machine.receive(frame(.resumeSet(token: "T2", resumed: true, answers: answers)))
        expectKinds(actions, [.end])
        guard case .end(let ending)? = actions.last else { return }
        #expect(ending.disposition == .retry)
    }
}

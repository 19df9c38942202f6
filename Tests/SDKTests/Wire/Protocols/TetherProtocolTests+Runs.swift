import SDK
import SDKTesting
import Testing

extension WireAction {
    /// A run as the actions one frame at a time give it: one `delivery` per message.
    var oneByOne: [WireAction] {
        guard case .deliveries(let subscription, let messages, _) = self else { return [self] }
        return messages.map { .delivery(subscription, $0.data, position: $0.position) }
    }
}

/// A read's messages of one subscription, one after another, go to the core as one run, routed
/// once, each message as the codec built it; a duplicate inside a run is dropped, and where the
/// run stopped is kept for the next read.
extension TetherProtocolTests {
    /// The run of `messages` for `subscription`, its bytes those of the frames the server wrote.
    func run(_ subscription: SubscriptionID, _ messages: [ChannelMessage]) -> WireAction {
        .deliveries(subscription, messages, bytes: messages.reduce(0) { $0 + frame(.message($1)).byteCount })
    }

    @Test("one subscription's messages in a row are one run; another channel's message, or any other frame, starts a new one")
    func runsOfOneSubscription() {
        var machine = ready()
        _ = machine.perform(.subscribe(7, Topic("room"), resume: nil))
        _ = machine.perform(.subscribe(8, Topic("news"), resume: nil))
        _ = machine.receive(contentsOf: [frame(.ack(Ack(id: 2, sequence: 0))), frame(.ack(Ack(id: 3, sequence: 0)))])
        func message(_ channel: String, _ sequence: UInt64) -> ChannelMessage { ChannelMessage(channel: channel, sequence: sequence, data: .number(.init(Double(sequence)))) }
        let actions = machine.receive(contentsOf: [
            frame(.message(message("room", 1))), frame(.message(message("room", 2))), frame(.message(message("room", 2))), frame(.message(message("room", 3))),
            frame(.message(message("news", 1))), frame(.message(message("news", 2))),
            frame(.pong(id: 99)),
            frame(.message(message("news", 3))),
        ])
        #expect(actions == [
            run(7, [message("room", 1), message("room", 2), message("room", 3)]),
            run(8, [message("news", 1), message("news", 2)]),
            run(8, [message("news", 3)]),
        ], "the duplicate dropped inside the run")
        #expect(machine.receive(contentsOf: [frame(.message(message("room", 3))), frame(.message(message("room", 4)))]) == [run(7, [message("room", 4)])],
                "the route kept where the run stopped")
        #expect(machine.receive(contentsOf: [frame(.message(message("room", 4)))]) == [], "a run of duplicates is no action")
    }
}

extension TetherProtocolTests {
    @Test("in a read too, a message of a channel's earlier subscription before the new one's ok is dropped, and the catch-up after the ok goes whole")
    func staleMessageBeforeOkInARead() {
        var machine = ready()
        _ = machine.perform(.subscribe(7, Topic("room"), resume: nil))
        _ = machine.receive(frame(.ack(Ack(id: 2, sequence: 0))))
        func message(_ sequence: UInt64) -> ChannelMessage { ChannelMessage(channel: "room", sequence: sequence, data: JSONValue(sequence)) }
        #expect(machine.receive(contentsOf: [frame(.message(message(1)))]) == [run(7, [message(1)])])
        _ = machine.perform(.unsubscribe(7))
        _ = machine.perform(.subscribe(8, Topic("room"), resume: .sequence(1)))
        let actions = machine.receive(contentsOf: [
            frame(.message(message(2))), frame(.ack(Ack(id: 3))), frame(.ack(Ack(id: 4, sequence: 3))), frame(.message(message(2))), frame(.message(message(3))),
        ])
        #expect(actions == [.subscribed(8, .caughtUp(to: .sequence(3))), run(8, [message(2), message(3)])], "the earlier subscription's message dropped")
    }
}

extension TetherProtocolTests {
    @Test("a message written other than as servers write it (its fields in another order) goes through the parser and joins the run all the same: the same messages, the same run")
    func messageReadEitherWayJoinsTheRun() throws {
        var machine = ready()
        _ = machine.perform(.subscribe(7, Topic("room"), resume: nil))
        _ = machine.receive(frame(.ack(Ack(id: 2, sequence: 0))))
        let reordered = TransportFrame.text(#"{"seq":2,"data":{"n":2},"channel":"room","type":"message"}"#)
        #expect(JSONWireCodec().channelMessage(in: reordered) == nil, "not read directly")
        let first = ChannelMessage(channel: "room", sequence: 1, data: ["n": 1])
        let second = ChannelMessage(channel: "room", sequence: 2, data: ["n": 2])
        #expect(JSONWireCodec().channelMessage(in: frame(.message(first))) == first, "read directly")
        let actions = machine.receive(contentsOf: [frame(.message(first)), reordered, frame(.message(ChannelMessage(channel: "room", sequence: 3, data: ["n": 3])))])
        guard case .deliveries(7, let messages, let bytes)? = actions.first, actions.count == 1 else {
            Issue.record("one run expected: \(actions)")
            return
        }
        #expect(messages.map(\.sequence) == [1, 2, 3] && messages[1] == second)
        #expect(bytes == frame(.message(first)).byteCount + reordered.byteCount + frame(.message(ChannelMessage(channel: "room", sequence: 3, data: ["n": 3]))).byteCount)
    }
}

@testable import SDK
import Testing

/// What a channel does with a run of messages, table by table: the session's per-message path
/// (`DeliveryCore.swift`), the same code `bench-instructions session` counts.
@Suite("ChannelState: holding and handing over a channel's messages")
struct ChannelStateDeliveryTests {
    private func messages(_ sequences: UInt64?...) -> [ChannelMessage] {
        sequences.map { ChannelMessage(channel: "room", sequence: $0, data: .init(Int($0 ?? 0))) }
    }

    @Test("a run is held in order; the channel's position is its last numbered message; only the turn's first run is 'first'")
    func holding() {
        var state = Session.ChannelState.empty
        let first = state.hold(messages(1, 2, nil), bytes: 10)
        #expect(first, "the turn's first run")
        #expect(state.position == .sequence(2), "the last numbered message, not the unnumbered after it")
        let later = state.hold(messages(3), bytes: 10)
        #expect(!later, "a later run of the same turn")
        #expect(state.undelivered.map(\.sequence) == [1, 2, nil, 3])
        #expect(state.position == .sequence(3))
        let empty = state.hold([], bytes: 10)
        #expect(!empty, "an empty run is never first")
    }

    @Test("with messages awaiting the store, the turn's first run is the one after them")
    func firstAfterTheStore() {
        var state = Session.ChannelState.empty
        _ = state.hold(messages(1, 2), bytes: 10)
        state.awaitingStore = [(batch: 1, count: 2)]
        let first = state.hold(messages(3), bytes: 10)
        #expect(first, "the two held wait for the store: 3 starts this turn's")
    }

    @Test("after a relaunch, what comes again up to where the killed launch was handed is flagged, and nothing after")
    func redeliveries() {
        var state = Session.ChannelState.empty
        state.redeliverUntil = .sequence(2)
        _ = state.hold(messages(1, 2, 3), bytes: 10)
        #expect(state.undelivered.map(\.isRedelivery) == [true, true, false])
        #expect(state.redeliverUntil == nil, "reached: the flagging ends")
    }

    @Test("flow-controlled, a catch-up's earlier messages do not move the channel's position back")
    func flowControlledPosition() {
        var state = Session.ChannelState.empty
        _ = state.hold(messages(10), bytes: 10)
        state.flowControlled = true
        _ = state.hold(messages(4, 5), bytes: 10)
        #expect(state.position == .sequence(10))
        _ = state.hold(messages(11), bytes: 10)
        #expect(state.position == .sequence(11))
    }

    @Test("takeHeld takes from the front, as many as asked (or all); count moves handedOver and handedThrough")
    func takingAndCounting() {
        var state = Session.ChannelState.empty
        _ = state.hold(messages(1, 2, 3), bytes: 30)
        let (front, frontBytes) = state.takeHeld(2)
        #expect(front.map(\.sequence) == [1, 2] && state.undelivered.map(\.sequence) == [3])
        #expect(frontBytes == 20 && state.undeliveredBytes == 10, "a share of the held bytes, by number")
        let last = state.count(front)
        #expect(last == .sequence(2))
        #expect(state.handedOver == 2 && state.handedThrough == .sequence(2))
        _ = state.hold(messages(4), bytes: 7)
        let (rest, restBytes) = state.takeHeld(.max)
        #expect(rest.map(\.sequence) == [3, 4] && state.undelivered.isEmpty)
        #expect(restBytes == 17 && state.undeliveredBytes == 0, "all taken: the bytes as they were held")
        let unnumbered = state.count(messages(nil))
        #expect(unnumbered == nil && state.handedOver == 3 && state.handedThrough == .sequence(2), "an unnumbered message counts, and moves no position")
    }

    @Test("offer hands the batch to every subscriber with room, and names those at their bound")
    func offering() {
        let (_, roomy) = AsyncThrowingStream<Subscriber.Batch, any Error>.makeStream()
        let (_, full) = AsyncThrowingStream<Subscriber.Batch, any Error>.makeStream()
        let fullBacklog = Locked(Subscriber.Backlog())
        fullBacklog.withLock { $0.unread = 3 }
        var state = Session.ChannelState.empty
        state.add(Subscriber(continuation: roomy, backlog: Locked(Subscriber.Backlog())), id: 1)
        state.add(Subscriber(continuation: full, backlog: fullBacklog), id: 2)
        let batch = messages(1, 2)
        let refused = state.offer(batch, bytes: batch.approximateByteCount, limit: 4, byteLimit: .max)
        #expect(refused == [2], "3 + 2 > 4")
        let handed = state.subscribers[1]?.backlog.withLock { $0.unread }
        let kept = fullBacklog.withLock { $0.unread }
        #expect(handed == 2)
        #expect(kept == 3, "handed nothing")
    }
}

/// The actions a read makes, as the session takes them: a subscription's deliveries in a row go
/// together.
@Suite("[WireAction].deliveryRun")
struct DeliveryRunTests {
    @Test("the deliveries of one subscription in a row, and the index after them; another subscription's or another action ends the run")
    func runs() {
        let actions: [WireAction] = [
            .delivery(1, .init(1), position: .sequence(1)), .delivery(1, .init(2), position: .sequence(2)), .delivery(2, .init(3), position: .sequence(1)),
            .send(.text("x")), .delivery(1, .init(4), position: .sequence(3)),
        ]
        var index = 0
        let first = actions.deliveryRun(of: 1, on: "a", from: &index)
        #expect(first.map(\.sequence) == [1, 2] && index == 2)
        let other = actions.deliveryRun(of: 2, on: "b", from: &index)
        #expect(other.map(\.channel) == ["b"] && index == 3)
        let none = actions.deliveryRun(of: 1, on: "a", from: &index)
        #expect(none.isEmpty && index == 3, "not a delivery: nothing taken")
        index = 4
        let last = actions.deliveryRun(of: 1, on: "a", from: &index)
        #expect(last.map(\.sequence) == [3] && index == 5)
    }
}

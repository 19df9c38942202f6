@testable import SDK
import Testing

/// When the app has finished a message: when it asks for the next one. Table by table, on the
/// backlog a subscription shares with the session.
@Suite("Subscriber.Backlog: what the app finished")
struct SubscriberBacklogTests {
    private func batch(_ values: Int...) -> Subscription.HeldBatch {
        Subscription.HeldBatch(messages: values.map { ChannelMessage(channel: "room", sequence: UInt64($0), data: .init($0)) })
    }

    @Test("a message is finished when the next is asked for; the batch's last one, when the next batch is asked for (and the session is told)")
    func finishing() {
        var backlog = Subscriber.Backlog()
        #expect(backlog.take().message == nil && backlog.finished == 0, "nothing held, nothing returned before")
        backlog.held = batch(1, 2)
        let first = backlog.take()
        #expect(first.message?.sequence == 1 && !first.batchFinished && backlog.finished == 0, "returned, not finished")
        let second = backlog.take()
        #expect(second.message?.sequence == 2 && !second.batchFinished && backlog.finished == 1, "asking for 2 finished 1")
        let after = backlog.take()
        #expect(after.message == nil && after.batchFinished && backlog.finished == 2, "asking past the batch finished 2: tell the session")
        let again = backlog.take()
        #expect(again.message == nil && !again.batchFinished && backlog.finished == 2, "told once")
        backlog.held = batch(3)
        #expect(backlog.take().message?.sequence == 3 && backlog.finished == 2)
    }
}

/// A batch an iterator reads as its own (`Subscription.Reading`): each message moved out in
/// order, the rest left to the next iterator when one is let go halfway.
@Suite("Subscription.Reading: a batch read as the iterator's own")
struct SubscriptionReadingTests {
    private func messages(_ values: ClosedRange<Int>) -> [ChannelMessage] {
        // Payloads and channels that hold references (a dictionary, a long string): moved out,
        // never released twice (the sanitizer suites run this too).
        values.map { ChannelMessage(channel: "a channel name longer than fifteen bytes", sequence: UInt64($0), data: ["n": .init($0)]) }
    }

    @Test("read in order, each message whole; one let go halfway leaves the rest, in order, to the next")
    func movedOutInOrder() {
        let backlog = Locked(Subscriber.Backlog())
        var reading: Subscription.Reading? = Subscription.Reading(messages(1...5), backlog: backlog)
        var read: [ChannelMessage] = []
        for _ in 0..<2 { if let message = reading?.next() { read.append(message) } }
        #expect(read == messages(1...2))
        reading = nil
        let rest = backlog.withLock { $0.takeRest() }
        #expect(rest == messages(3...5), "the three not read, in order")
        let next = Subscription.Reading(rest ?? [], backlog: backlog)
        var all: [ChannelMessage] = []
        while let message = next.next() { all.append(message) }
        #expect(all == messages(3...5) && backlog.withLock { $0.progress.value } == 5)
    }

    @Test("the vacated message a slot keeps holds nothing to release: its bytes are copied into each slot read (Subscription.Reading.next)")
    func vacatedHoldsNoReference() {
        let placeholder = ChannelMessage.placeholder
        // A field added to ChannelMessage must keep the placeholder free of references (an
        // empty string, no position, `.null`, false): update this list only after checking that.
        let fields = Mirror(reflecting: placeholder).children.compactMap(\.label)
        #expect(fields == ["channel", "position", "data", "isRedelivery"])
        #expect(placeholder.channel.isEmpty && placeholder.position == nil && placeholder.data == .null && !placeholder.isRedelivery)
    }
}

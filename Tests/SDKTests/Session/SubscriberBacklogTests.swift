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

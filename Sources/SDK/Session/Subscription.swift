/// The messages of one channel, in sequence order, each exactly once. It ends when the app
/// unsubscribes, with an error when the server rejects the subscription, and when the session
/// ends. A reader that falls more than ``AppSettings/subscriberBufferLimit`` messages behind
/// gets what was held for it, then ``SessionError/Code/subscriberTooSlow``. Stop iterating (or drop it) to unsubscribe: dropping the last `Subscription` of a
/// channel unsubscribes from it, so keep it alive while you want the channel (in a test, until
/// its last line).
///
/// Iterate it from one task at a time. A new iterator goes on where the last one stopped.
public struct Subscription: AsyncSequence, Sendable {
    public typealias Element = ChannelMessage
    public typealias Failure = any Error

    /// The channel's name.
    public let channel: String
    /// The messages, in the batches the session hands over: the messages of one read from the
    /// socket go to a subscriber in one step, so an app that keeps up wakes once per read, not
    /// once per message.
    let batches: AsyncThrowingStream<[ChannelMessage], any Error>
    /// The rest of the batch being read, shared by every iterator of this subscription: an
    /// iterator dropped halfway through a batch leaves its messages to the next one.
    let held = Locked(HeldBatch())
    /// How many messages the session handed over that no iterator has taken yet: the session
    /// hands over no more than ``AppSettings/subscriberBufferLimit``.
    let backlog: Locked<Subscriber.Backlog>

    init(channel: String, batches: AsyncThrowingStream<[ChannelMessage], any Error>, backlog: Locked<Subscriber.Backlog>) {
        self.channel = channel
        self.batches = batches
        self.backlog = backlog
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(batches: batches.makeAsyncIterator(), held: held, backlog: backlog)
    }

    struct HeldBatch: Sendable {
        var messages: [ChannelMessage] = []
        var index = 0

        mutating func take() -> ChannelMessage? {
            guard index < messages.count else { return nil }
            defer {
                index += 1
                if index == messages.count { (messages, index) = ([], 0) }
            }
            return messages[index]
        }
    }

    /// Reads a subscription's messages one at a time; the next message of a batch already
    /// handed over is returned without suspending.
    public struct Iterator: AsyncIteratorProtocol {
        var batches: AsyncThrowingStream<[ChannelMessage], any Error>.Iterator
        let held: Locked<HeldBatch>
        let backlog: Locked<Subscriber.Backlog>

        public mutating func next() async throws -> ChannelMessage? {
            try await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> ChannelMessage? {
            while true {
                if let message = held.withLock({ $0.take() }) { return message }
                guard let batch = try await batches.next(isolation: actor) else { return nil }
                backlog.withLock { $0.unread -= batch.count }
                held.withLock { $0 = HeldBatch(messages: batch) }
            }
        }
    }
}

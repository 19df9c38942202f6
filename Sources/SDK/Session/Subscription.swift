/// The messages of one channel, in sequence order, each exactly once. It ends when the app
/// unsubscribes, with an error when the server rejects the subscription, and when the session
/// ends. A reader that falls behind by more than ``AppSettings/subscriberBufferLimit`` messages
/// (or ``AppSettings/subscriberBufferBytes``) is held back until it has read half of them, then
/// caught up where the protocol can (``AppSettings/Builder/subscriberBufferLimit(_:)``); one that
/// stops reading ends with ``SessionError/Code/subscriberTooSlow``. Stop iterating (or drop it) to unsubscribe: dropping the last `Subscription` of a
/// channel unsubscribes from it, so keep it alive while you want the channel (in a test, until
/// its last line).
///
/// Iterate it from one task at a time. A new iterator goes on where the last one stopped. A
/// message counts as finished when the app asks for the next one: with a store, that is where a
/// relaunch resumes (<doc:Durability>).
public struct Subscription: AsyncSequence, Sendable {
    public typealias Element = ChannelMessage
    public typealias Failure = any Error

    /// The channel's name.
    public let channel: String
    /// The messages, in the batches the session hands over: the messages of one read from the
    /// socket go to a subscriber in one step, so an app that keeps up wakes once per read, not
    /// once per message.
    let batches: AsyncThrowingStream<Subscriber.Batch, any Error>
    /// How many messages the session handed over that no iterator has taken yet (the session
    /// hands over no more than ``AppSettings/subscriberBufferLimit``), the rest of the batch
    /// being read, and how far the app got.
    let backlog: Locked<Subscriber.Backlog>
    /// Tells the session that the app finished a batch (`nil`: nothing needs to know).
    let batchFinished: (@Sendable () -> Void)?
    /// Tells the session that the subscriber, held back at its bound, has read down to half.
    let drained: @Sendable () -> Void

    init(
        channel: String, batches: AsyncThrowingStream<Subscriber.Batch, any Error>, backlog: Locked<Subscriber.Backlog>,
        batchFinished: (@Sendable () -> Void)? = nil, drained: @escaping @Sendable () -> Void = {}
    ) {
        self.channel = channel
        self.batches = batches
        self.backlog = backlog
        self.batchFinished = batchFinished
        self.drained = drained
    }

    /// How many batches the subscription's iterators took from the session: each at most one
    /// wake-up of the reading task.
    package var batchesTaken: UInt64 { backlog.withLock { $0.batches } }

    /// The position of the last message the session handed to this subscription.
    package var lastHandedPosition: StreamPosition? { backlog.withLock { $0.lastPosition } }

    public func makeAsyncIterator() -> Iterator {
        Iterator(batches: batches.makeAsyncIterator(), backlog: backlog, batchFinished: batchFinished, drained: drained)
    }

    struct HeldBatch: Sendable {
        var messages: [ChannelMessage] = []
        var index = 0

        var isEmpty: Bool { index >= messages.count }

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
        var batches: AsyncThrowingStream<Subscriber.Batch, any Error>.Iterator
        let backlog: Locked<Subscriber.Backlog>
        let batchFinished: (@Sendable () -> Void)?
        let drained: @Sendable () -> Void

        public mutating func next() async throws -> ChannelMessage? {
            try await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> ChannelMessage? {
            while true {
                // Asking for the next message finishes the one before it (one lock per message).
                let (message, finishedBatch) = backlog.withLock { $0.take() }
                if let message { return message }
                if finishedBatch { batchFinished?() }
                guard let batch = try await batches.next(isolation: actor) else { return nil }
                let readDown = backlog.withLock { $0.received(batch) }
                if readDown { drained() }
            }
        }
    }
}

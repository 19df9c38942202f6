/// The messages of one channel, in sequence order, each exactly once. It ends when the app
/// unsubscribes, with an error when the server rejects the subscription, and when the session
/// ends. Stop iterating (or drop it) to unsubscribe: dropping the last `Subscription` of a
/// channel unsubscribes from it, so keep it alive while you want the channel (in a test, until
/// its last line).
public struct Subscription: AsyncSequence, Sendable {
    public typealias Element = ChannelMessage
    public typealias Failure = any Error

    /// The channel's name.
    public let channel: String
    /// The messages, in the batches the session hands over: the messages of one read from the
    /// socket go to a subscriber in one step, so an app that keeps up wakes once per read, not
    /// once per message.
    let batches: AsyncThrowingStream<[ChannelMessage], any Error>

    public func makeAsyncIterator() -> Iterator {
        Iterator(batches: batches.makeAsyncIterator())
    }

    /// Reads a subscription's messages one at a time. The next message of a batch already
    /// handed over is returned without suspending (inlined into the app's loop).
    public struct Iterator: AsyncIteratorProtocol {
        @usableFromInline var batches: AsyncThrowingStream<[ChannelMessage], any Error>.Iterator
        @usableFromInline var pending: [ChannelMessage] = []
        @usableFromInline var index = 0

        init(batches: AsyncThrowingStream<[ChannelMessage], any Error>.Iterator) {
            self.batches = batches
        }

        @inlinable
        public mutating func next() async throws -> ChannelMessage? {
            if index < pending.count {
                defer { index += 1 }
                return pending[index]
            }
            return try await nextBatch(isolation: nil)
        }

        @inlinable
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> ChannelMessage? {
            if index < pending.count {
                defer { index += 1 }
                return pending[index]
            }
            return try await nextBatch(isolation: actor)
        }

        /// Waits for the next batch and returns its first message.
        @usableFromInline
        mutating func nextBatch(isolation actor: isolated (any Actor)?) async throws(any Error) -> ChannelMessage? {
            repeat {
                guard let batch = try await batches.next(isolation: actor) else {
                    pending = []
                    index = 0
                    return nil
                }
                pending = batch
                index = 0
            } while pending.isEmpty
            index = 1
            return pending[0]
        }
    }
}

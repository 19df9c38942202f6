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

    /// Reads a subscription's messages one at a time.
    public struct Iterator: AsyncIteratorProtocol {
        var batches: AsyncThrowingStream<[ChannelMessage], any Error>.Iterator
        var pending: [ChannelMessage] = []
        var index = 0

        public mutating func next() async throws -> ChannelMessage? {
            while index == pending.count {
                guard let batch = try await batches.next() else { return nil }
                pending = batch
                index = 0
            }
            defer { index += 1 }
            return pending[index]
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> ChannelMessage? {
            while index == pending.count {
                guard let batch = try await batches.next(isolation: actor) else { return nil }
                pending = batch
                index = 0
            }
            defer { index += 1 }
            return pending[index]
        }
    }
}

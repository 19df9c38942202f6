/// The messages of one channel, in sequence order, each exactly once. It ends when the app
/// unsubscribes, with an error when the server rejects the subscription, and when the session
/// ends. Stop iterating (or drop it) to unsubscribe: dropping the last `Subscription` of a
/// channel unsubscribes from it, so keep it alive while you want the channel (in a test, until
/// its last line).
public struct Subscription: AsyncSequence, Sendable {
    public typealias Element = ChannelMessage

    /// The channel's name.
    public let channel: String
    let stream: AsyncThrowingStream<ChannelMessage, any Error>

    public func makeAsyncIterator() -> AsyncThrowingStream<ChannelMessage, any Error>.Iterator {
        stream.makeAsyncIterator()
    }
}

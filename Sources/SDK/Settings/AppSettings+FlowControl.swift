extension AppSettings.Builder {
    /// How many messages one ``Subscription`` may hold unread (default 10,000; a subscriber that
    /// holds nothing takes one socket read's batch whole, however large). 1 to 1,000,000.
    ///
    /// A subscriber at its bound (this, or ``subscriberBufferBytes(_:)``) is handed nothing more
    /// for a while; the socket, the heartbeat and the channel's other subscribers go on. What it
    /// gets then depends on the server's protocol (<doc:FlowControl>):
    /// - **Tether's protocol**: nothing is lost. Once it has read half of what it holds it is
    ///   caught up from the last message it got (the resume a reconnect uses), then goes on live:
    ///   every message, in order, once. Only a catch-up past what the server still holds (its
    ///   retention) ends it, with ``SessionError/Code/subscriberFellBehind``.
    /// - **Other protocols** cannot ask for a channel's messages again: it gets what it holds,
    ///   then ``SessionError/Code/subscriberFellBehind`` naming the last message it got.
    ///
    /// A subscriber held back that reads nothing for ``subscriberStallTimeout(_:)`` has stopped
    /// reading: it ends with ``SessionError/Code/subscriberTooSlow``.
    public func subscriberBufferLimit(_ messages: Int) -> Self {
        var copy = self
        copy.subscriberBufferLimit = messages
        return copy
    }

    /// How many bytes of messages one ``Subscription`` may hold unread (default 8 MiB; an
    /// approximate size: the frames' where Tether's protocol takes a read of frames at once, as
    /// from the NIO transport, else the messages' JSON text), as ``subscriberBufferLimit(_:)``
    /// bounds their number: the first bound reached holds it back. 1 KiB to 1 GiB.
    public func subscriberBufferBytes(_ bytes: Int) -> Self {
        var copy = self
        copy.subscriberBufferBytes = bytes
        return copy
    }

    /// How long a subscriber held back at its bound may read nothing before the session decides
    /// it stopped reading and ends it with ``SessionError/Code/subscriberTooSlow`` (default 60
    /// s; checked every such interval, so it ends between one and two of them after its last
    /// read). One that reads, however slowly, is never ended for it. More than 0 to 24 hours.
    public func subscriberStallTimeout(_ timeout: Duration) -> Self {
        var copy = self
        copy.subscriberStallTimeout = timeout
        return copy
    }

    func checkFlowControl() throws(SettingsError) {
        guard (1...1_000_000).contains(subscriberBufferLimit) else {
            throw SettingsError(.invalidLimit, "subscriberBufferLimit must be 1 to 1000000 messages (got \(subscriberBufferLimit))")
        }
        guard (1024...(1 << 30)).contains(subscriberBufferBytes) else {
            throw SettingsError(.invalidLimit, "subscriberBufferBytes must be 1024 to 1073741824 bytes (got \(subscriberBufferBytes))")
        }
            try Self.check(subscriberStallTimeout, "subscriberStallTimeout", allowZero: false)
    }
}

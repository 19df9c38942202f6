/// One ``Subscription``'s end inside the session: where its batches go, and how many messages
/// it holds unread. The session adds what it hands over; the subscription's iterator takes
/// away what it reads. A subscriber that would hold more than the limit is handed nothing more
/// (``offer(_:limit:)``): the session ends it instead, so a reader that stopped costs a bounded
/// buffer, never the whole stream.
struct Subscriber: Sendable {
    /// What a subscriber holds unread, and how far the app got, shared with its ``Subscription``.
    struct Backlog: Sendable {
        /// Messages handed over in batches no iterator has taken yet.
        var unread = 0
        /// The position of the last message handed over (for the error that ends a slow one).
        var lastPosition: StreamPosition?
        /// The rest of the batch being read, shared by every iterator of the subscription: an
        /// iterator dropped halfway through a batch leaves its messages to the next one.
        var held = Subscription.HeldBatch()
        /// How many messages the app has finished: a message is finished when the app asks for
        /// the next one after it.
        var finished: UInt64 = 0
        /// A message was returned and the app has not asked for the next one yet.
        var outstanding = false

        /// The next message held, if any — and first, the one returned before it counts as
        /// finished. `batchFinished`: that finished the last message of the batch (the session
        /// is told: what the app finished may now be stored).
        mutating func take() -> (message: ChannelMessage?, batchFinished: Bool) {
            var batchFinished = false
            if outstanding {
                finished += 1
                outstanding = false
                batchFinished = held.isEmpty
            }
            guard let message = held.take() else { return (nil, batchFinished) }
            outstanding = true
            return (message, false)
        }
    }

    let continuation: AsyncThrowingStream<[ChannelMessage], any Error>.Continuation
    let backlog: Locked<Backlog>
    /// How many messages of the channel the session had handed over when this subscriber came:
    /// what it finished counts from there (``ChannelState/handedOver``).
    var startIndex: UInt64 = 0

    /// The channel's count of messages this subscriber has finished.
    var finishedIndex: UInt64 { startIndex + backlog.withLock { $0.finished } }

    /// Hands `batch` over, unless the subscriber would then hold more than `limit` unread:
    /// `false`, and nothing handed over. One that holds nothing unread keeps up, and always
    /// takes the batch, however large (a catch-up's read can hold more than the limit).
    func offer(_ batch: [ChannelMessage], limit: Int) -> Bool {
        let accepted = backlog.withLock { backlog in
            guard backlog.unread == 0 || backlog.unread + batch.count <= limit else { return false }
            backlog.unread += batch.count
            if let position = batch.last(where: { $0.position != nil })?.position { backlog.lastPosition = position }
            return true
        }
        if accepted { continuation.yield(batch) }
        return accepted
    }

    /// The error that ends a subscriber that fell behind by more than `limit` on `channel`.
    func tooSlow(on channel: String, limit: Int) -> SessionError {
        let last = backlog.withLock { $0.lastPosition }.map { "; the last message it got is at \($0)" } ?? ""
        return SessionError(
            .subscriberTooSlow, "the subscriber of \(channel) fell more than \(limit) messages behind: it was let go\(last) (subscribe again, and fetch what came since)"
        )
    }
}

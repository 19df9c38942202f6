/// One ``Subscription``'s end inside the session: where its batches go, and how much it holds
/// unread. The session adds what it hands over; the subscription's iterator takes away what it
/// reads. A subscriber that would hold more than its bound is handed nothing more
/// (``offer(_:bytes:limit:byteLimit:)``) until it has read half of what it holds; the session
/// then catches it up or, where the protocol cannot, ends it (<doc:FlowControl>).
package struct Subscriber: Sendable {
    /// What a subscriber holds unread, and how far the app got, shared with its ``Subscription``.
    package struct Backlog: Sendable {
        /// Messages handed over in batches no iterator has taken yet, and their bytes.
        var unread = 0
        var unreadBytes = 0
        /// Held back at its bound: the levels it must read down to (messages, bytes) before the
        /// session is told (``Subscription/drained``).
        var resumeAt: (messages: Int, bytes: Int)?
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
        /// How many messages the app has taken (its progress, for the stall check): written by
        /// the iterator without this lock where it reads a batch of its own (`Subscription.Reading`).
        let progress = TakenCounter()
        /// How many batches an iterator took from the stream: each one a wake-up of the app's
        /// task at most.
        package var batches: UInt64 = 0

        /// Nothing handed over yet.
        package init() {}

        /// The next message held, if any — and first, the one returned before it counts as
        /// finished. `batchFinished`: that finished the last message of the batch (the session
        /// is told: what the app finished may now be stored).
        package mutating func take() -> (message: ChannelMessage?, batchFinished: Bool) {
            var batchFinished = false
            if outstanding {
                finished += 1
                outstanding = false
                batchFinished = held.isEmpty
            }
            guard let message = held.take() else { return (nil, batchFinished) }
            outstanding = true
            progress.set(progress.value + 1)
            return (message, false)
        }

        /// An iterator took `batch` from the stream to read it (as ``held``, where each message's
        /// finish is counted; or as a batch of its own): `true` when that read a
        /// subscriber held back down to the level the session waits for
        /// (``Subscription/drained``).
        package mutating func received(_ batch: Batch) -> Bool {
            unread -= batch.messages.count
            unreadBytes -= batch.bytes
            batches += 1
            guard let resumeAt, unread <= resumeAt.messages, unreadBytes <= resumeAt.bytes else { return false }
            self.resumeAt = nil
            return true
        }
    }

    /// Messages handed over together, with their size (``JSONValue/approximateByteCount``).
    package struct Batch: Sendable {
        var messages: [ChannelMessage]
        var bytes: Int

        package init(messages: [ChannelMessage], bytes: Int) {
            self.messages = messages
            self.bytes = bytes
        }
    }

    /// Where a subscriber stands in the channel's flow.
    enum Flow: Equatable {
        /// Handed every message as it comes.
        case flowing
        /// Held back at its bound: handed nothing until it has read half of what it holds.
        /// `taken`: how many messages it had taken at the last stall check.
        case heldBack(taken: UInt64)
        /// Read down: handed the messages after the last one it got, as the catch-up brings
        /// them, then live ones.
        case catchingUp
    }

    let continuation: AsyncThrowingStream<Batch, any Error>.Continuation
    let backlog: Locked<Backlog>
    /// How many messages of the channel the session had handed over when this subscriber came:
    /// what it finished counts from there (``ChannelState/handedOver``).
    var startIndex: UInt64 = 0
    var flow = Flow.flowing

    package init(continuation: AsyncThrowingStream<Batch, any Error>.Continuation, backlog: Locked<Backlog>, startIndex: UInt64 = 0) {
        self.continuation = continuation
        self.backlog = backlog
        self.startIndex = startIndex
    }

    /// The channel's count of messages this subscriber has finished.
    var finishedIndex: UInt64 { startIndex + backlog.withLock { $0.finished } }

    /// Hands `batch` (of `bytes`) over, unless the subscriber would then hold more than `limit`
    /// messages or `byteLimit` bytes unread: `false`, nothing handed over, and the subscriber is
    /// held back until it has read down to half of both. One that holds nothing unread keeps up,
    /// and always takes the batch, however large (a catch-up's read can hold more than the limit).
    package func offer(_ batch: [ChannelMessage], bytes: Int, limit: Int, byteLimit: Int) -> Bool {
        let accepted = backlog.withLock { backlog in
            guard backlog.unread == 0 || (backlog.unread + batch.count <= limit && backlog.unreadBytes + bytes <= byteLimit) else {
                backlog.resumeAt = (limit / 2, byteLimit / 2)
                return false
            }
            backlog.unread += batch.count
            backlog.unreadBytes += bytes
            if let position = batch.last(where: { $0.position != nil })?.position { backlog.lastPosition = position }
            return true
        }
        if accepted { continuation.yield(Batch(messages: batch, bytes: bytes)) }
        return accepted
    }

    /// The position of the last message handed over.
    var lastPosition: StreamPosition? { backlog.withLock { $0.lastPosition } }

    /// How many messages the app has taken.
    var takenCount: UInt64 { backlog.withLock { $0.progress }.value }

    /// The error that ends a subscriber held back at its bound that read nothing for `stall`.
    func stopped(on channel: String, stall: Duration) -> SessionError {
        SessionError(
            .subscriberTooSlow,
            "the subscriber of \(channel) stopped reading: held back at its bound, it read nothing for \(stall)\(lastGot) (subscribe again, and fetch what came since)"
        )
    }

    /// The error that ends a subscriber that reads slower than the stream of `channel` and
    /// cannot be caught up (`why`).
    func fellBehind(on channel: String, _ why: String) -> SessionError {
        SessionError(.subscriberFellBehind, "the subscriber of \(channel) fell behind: \(why)\(lastGot) (subscribe again, and fetch what came since)")
    }

    private var lastGot: String {
        lastPosition.map { "; the last message it got is at \($0)" } ?? ""
    }
}

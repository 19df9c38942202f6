#if canImport(Synchronization)
import Synchronization
#endif

/// The messages of one channel, in sequence order, each exactly once. It ends when the app
/// unsubscribes, with an error when the server rejects the subscription, and when the session
/// ends. A reader that falls behind by more than ``AppSettings/subscriberBufferLimit`` messages
/// (or ``AppSettings/subscriberBufferBytes``) is held back until it has read half of them, then
/// caught up where the protocol can (``AppSettings/Builder/subscriberBufferLimit(_:)``); one that
/// stops reading ends with ``SessionError/Code/subscriberTooSlow``. Stop iterating (or drop it) to unsubscribe: dropping the last `Subscription` of a
/// channel unsubscribes from it, so keep it alive while you want the channel (in a test, until
/// its last line).
///
/// Iterate it from one task at a time. A new iterator goes on where the last one stopped, once
/// that one is let go (a `for` loop's is, when the loop ends). A message counts as finished when
/// the app asks for the next one: with a store, that is where a relaunch resumes
/// (<doc:Durability>).
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

    /// Reads a subscription's messages one at a time; the next message of a batch already
    /// handed over is returned without suspending. Where each message's finish counts (a store,
    /// MQTT's acknowledgement: `batchFinished`), a message is taken under the backlog's lock;
    /// elsewhere the iterator takes each batch once and reads it as its own.
    public struct Iterator: AsyncIteratorProtocol {
        var batches: AsyncThrowingStream<Subscriber.Batch, any Error>.Iterator
        let backlog: Locked<Subscriber.Backlog>
        let batchFinished: (@Sendable () -> Void)?
        let drained: @Sendable () -> Void
        /// The batch being read, without a lock per message (no `batchFinished`).
        var reading: Reading?

        init(
            batches: AsyncThrowingStream<Subscriber.Batch, any Error>.Iterator, backlog: Locked<Subscriber.Backlog>,
            batchFinished: (@Sendable () -> Void)?, drained: @escaping @Sendable () -> Void
        ) {
            self.batches = batches
            self.backlog = backlog
            self.batchFinished = batchFinished
            self.drained = drained
        }

        public mutating func next() async throws -> ChannelMessage? {
            try await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> ChannelMessage? {
            while true {
                if let message = reading?.next() { return message }
                if let batchFinished {
                    // Asking for the next message finishes the one before it (one lock per message).
                    let (message, finishedBatch) = backlog.withLock { $0.take() }
                    if let message { return message }
                    if finishedBatch { batchFinished() }
                } else {
                    // What an iterator let go of halfway comes first.
                    reading = nil
                    if let rest = backlog.withLock({ $0.takeRest() }) {
                        reading = Reading(rest, backlog: backlog)
                        continue
                    }
                }
                guard let batch = try await batches.next(isolation: actor) else { return nil }
                let counted = batchFinished != nil
                let readDown = backlog.withLock { backlog in
                    if counted { backlog.held = HeldBatch(messages: batch.messages) }
                    return backlog.received(batch)
                }
                if readDown { drained() }
                if !counted { reading = Reading((consume batch).messages, backlog: backlog) }
            }
        }
    }
}

extension Subscription {
    /// The rest of a batch, in the backlog every iterator of the subscription shares: where each
    /// message's finish counts, the batch being read; elsewhere, what an iterator dropped
    /// halfway through a batch left to the next one.
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

    /// A batch an iterator took to read as its own: each message is moved out to the app, not
    /// copied, without a lock, its progress written to the subscription's `TakenCounter` (what
    /// the stall check reads). An iterator let go of halfway leaves the rest to the next one
    /// (`deinit`).
    ///
    /// Not `Sendable`: it is the iterator's, and an iterator is used from one task at a time.
    package final class Reading {
        /// The batch: those before `index` were moved out to the app, an empty message left in
        /// their place (so none is copied, nor freed again with the array).
        @exclusivity(unchecked) private var messages: [ChannelMessage]
        @exclusivity(unchecked) private var index = 0
        @exclusivity(unchecked) private var taken: UInt64
        private let backlog: Locked<Subscriber.Backlog>
        private let progress: TakenCounter
        /// What is left in a slot whose message was moved out (``ChannelMessage/placeholder``).
        private let vacated: UnsafeMutablePointer<ChannelMessage>

        package init(_ messages: consuming [ChannelMessage], backlog: Locked<Subscriber.Backlog>) {
            self.messages = messages
            self.backlog = backlog
            self.progress = backlog.withLock { $0.progress }
            self.taken = progress.value
            vacated = .allocate(capacity: 1)
            vacated.initialize(to: .placeholder)
        }

        /// The next message, if any: taken (the stall check sees it at once).
        package func next() -> ChannelMessage? {
            guard index < messages.count else { return nil }
            // Moved out through the buffer, the vacated message's bytes copied into its slot:
            // `swap` with a placeholder built, copied and destroyed one through the message's
            // value witnesses (~170 instructions a message). Sound because the vacated message
            // holds no reference (an empty string lives in the string's own bytes; `.null`, no
            // position and a Bool hold nothing): its bytes are the whole value, and the array
            // destroying them later releases nothing. `vacatedHoldsNoReference` pins its fields.
            let at = index
            let vacated = vacated
            let message = messages.withUnsafeMutableBufferPointer { buffer in
                let slot = buffer.baseAddress.unsafelyUnwrapped + at
                defer { UnsafeMutableRawPointer(slot).copyMemory(from: vacated, byteCount: MemoryLayout<ChannelMessage>.size) }
                return slot.move()
            }
            index += 1
            taken += 1
            progress.set(taken)
            return message
        }

        deinit {
            vacated.deinitialize(count: 1)
            vacated.deallocate()
            guard index < messages.count else { return }
            let rest = Array(messages[index...])
            backlog.withLock { backlog in
                let later = backlog.held.messages.dropFirst(backlog.held.index)
                backlog.held = HeldBatch(messages: rest + later)
            }
        }
    }
}

extension ChannelMessage {
    /// What a `Subscription.Reading` leaves where a message was moved out: nothing to free.
    static var placeholder: ChannelMessage { ChannelMessage(channel: "", position: nil, data: .null) }
}

extension Subscriber.Backlog {
    /// What an iterator let go of halfway through a batch, for the next one to read (`nil`:
    /// nothing).
    mutating func takeRest() -> [ChannelMessage]? {
        guard !held.isEmpty else { return nil }
        defer { held = Subscription.HeldBatch() }
        return held.index == 0 ? held.messages : Array(held.messages[held.index...])
    }
}

/// How many messages a subscription's iterators have taken: written by the iterator, one message
/// at a time, read by the session's stall check (<doc:FlowControl>). Where the platform has
/// atomics (Linux; iOS 18, macOS 15 and later) a message costs one relaxed store, no lock;
/// elsewhere it is a lock, as every message cost before.
package final class TakenCounter: Sendable {
    private let storage: any Storage

    /// `atomic`: `false` takes the lock even where atomics are there (the tests hold both to
    /// the same count).
    package init(atomic: Bool = true) {
        #if canImport(Synchronization)
        if atomic, #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            storage = AtomicStorage()
            return
        }
        #endif
        storage = LockedStorage()
    }

    /// The count now.
    package var value: UInt64 { storage.value }

    /// Sets the count to `value`. One writer at a time: the iterator reading (an iterator is
    /// used from one task at a time, and a new one begins only once the last has let go).
    func set(_ value: UInt64) { storage.set(value) }

    private protocol Storage: Sendable {
        var value: UInt64 { get }
        func set(_ value: UInt64)
    }

    #if canImport(Synchronization)
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    private final class AtomicStorage: Storage {
        private let count = Atomic<UInt64>(0)
        var value: UInt64 { count.load(ordering: .relaxed) }
        func set(_ value: UInt64) { count.store(value, ordering: .relaxed) }
    }
    #endif

    private final class LockedStorage: Storage {
        private let count = Locked<UInt64>(0)
        var value: UInt64 { count.withLock { $0 } }
        func set(_ value: UInt64) { count.withLock { $0 = value } }
    }
}

extension Session {
    /// What the session holds for one channel.
    ///
    /// A value, as a dictionary's elements are: but the members that hold references live in one
    /// box, copied on write. Reading `channels[name]` copies the state, and copying a struct of
    /// eleven such members retained each of them (a recovery of 1,000 channels spent a tenth of
    /// its time there); now a copy retains the box once, and a write copies the box only when a
    /// copy shares it.
    package struct ChannelState {
        /// What the protocol needs beyond the name (a GraphQL operation), for every (re)subscribe.
        var options: JSONValue? {
            get { storage.options }
            _modify {
                makeUnique()
                yield &storage.options
            }
        }
        /// Every `Subscription` listening, by id.
        var subscribers: [UInt64: Subscriber] {
            get { storage.subscribers }
            _modify {
                makeUnique()
                yield &storage.subscribers
            }
        }
        /// Messages delivered in this turn, handed to the subscribers together when it ends.
        var undelivered: [ChannelMessage] {
            get { storage.undelivered }
            _modify {
                makeUnique()
                yield &storage.undelivered
            }
        }
        /// The size of `undelivered`, as the subscribers' byte bound counts it.
        var undeliveredBytes = 0
        /// With a store: how many of `undelivered` wait for the store batch that records their
        /// positions (counted from the first), oldest first (``Session/handOverStored()``).
        var awaitingStore: [(batch: UInt64, count: Int)] {
            get { storage.awaitingStore }
            _modify {
                makeUnique()
                yield &storage.awaitingStore
            }
        }
        /// Where the channel's stream stands for the app (the last message delivered, or where
        /// the server said it began): a resubscribe asks for everything after it. What it holds
        /// is the protocol's; the protocol's machine drops what it already delivered.
        var position: StreamPosition? {
            get { storage.position }
            _modify {
                makeUnique()
                yield &storage.position
            }
        }
        /// Indicates that the server acknowledged it once: re-subscribing is a replay.
        var hasBeenActive = false
        /// `subscribe(to:)` calls waiting for the acknowledgement.
        var waiters: [(subscriber: UInt64, continuation: CheckedContinuation<Void, any Error>)] {
            get { storage.waiters }
            _modify {
                makeUnique()
                yield &storage.waiters
            }
        }
        /// The presence state the app tracks on the channel (``Session/track(_:on:)``),
        /// announced again after every resubscribe.
        var tracked: JSONValue? {
            get { storage.tracked }
            _modify {
                makeUnique()
                yield &storage.tracked
            }
        }
        /// How many messages the subscribers were handed, in all (a subscriber's finished count
        /// starts from what it was when it came).
        var handedOver: UInt64 = 0
        /// With a store: the positions of messages handed over and not yet finished by every
        /// subscriber, by their count; and where every subscriber has finished.
        var unfinished: [(index: UInt64, position: StreamPosition)] {
            get { storage.unfinished }
            _modify {
                makeUnique()
                yield &storage.unfinished
            }
        }
        var finished: StreamPosition? {
            get { storage.finished }
            _modify {
                makeUnique()
                yield &storage.finished
            }
        }
        /// After a relaunch: the messages up to this position were handed to the killed launch
        /// (``ChannelMessage/isRedelivery``).
        var redeliverUntil: StreamPosition? {
            get { storage.redeliverUntil }
            _modify {
                makeUnique()
                yield &storage.redeliverUntil
            }
        }
        /// After a relaunch: when the position it resumes from was stored (wall clock, Unix ms).
        var resumedFromStoredAt: Int64?
        /// The position of the newest message handed over (to any subscriber): what comes again
        /// at or before it is a catch-up's, for the subscribers behind it.
        var handedThrough: StreamPosition? {
            get { storage.handedThrough }
            _modify {
                makeUnique()
                yield &storage.handedThrough
            }
        }
        /// Indicates that a subscriber is held back or catching up (``Session/handOverControlled(_:on:)``).
        var flowControlled = false
        /// A subscriber read down while a subscribe was on the way: catch up again once answered.
        var catchUpAgain = false

        private var storage = Storage()

        init(options: JSONValue? = nil, position: StreamPosition? = nil, hasBeenActive: Bool = false) {
            storage.options = options
            storage.position = position
            self.hasBeenActive = hasBeenActive
        }

        /// Runs `body` on this state: `channels[name]?.update { … }` changes a channel's state in
        /// place, in one lookup, where `var state = channels[name]` … `channels[name] = state`
        /// copies it.
        mutating func update<Result>(_ body: (inout Self) throws -> Result) rethrows -> Result {
            try body(&self)
        }

        /// Gives this state a box of its own before a write, if a copy shares it.
        private mutating func makeUnique() {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        }

        /// The members that hold references. Only its `ChannelState` reaches it, and writes
        /// only through `makeUnique()`: an access is exclusive when the state's is.
        private final class Storage {
            @exclusivity(unchecked) var options: JSONValue?
            @exclusivity(unchecked) var subscribers: [UInt64: Subscriber] = [:]
            @exclusivity(unchecked) var undelivered: [ChannelMessage] = []
            @exclusivity(unchecked) var awaitingStore: [(batch: UInt64, count: Int)] = []
            @exclusivity(unchecked) var position: StreamPosition?
            @exclusivity(unchecked) var waiters: [(subscriber: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
            @exclusivity(unchecked) var tracked: JSONValue?
            @exclusivity(unchecked) var unfinished: [(index: UInt64, position: StreamPosition)] = []
            @exclusivity(unchecked) var finished: StreamPosition?
            @exclusivity(unchecked) var redeliverUntil: StreamPosition?
            @exclusivity(unchecked) var handedThrough: StreamPosition?

            init() {}

            func copy() -> Storage {
                let copy = Storage()
                copy.options = options
                copy.subscribers = subscribers
                copy.undelivered = undelivered
                copy.awaitingStore = awaitingStore
                copy.position = position
                copy.waiters = waiters
                copy.tracked = tracked
                copy.unfinished = unfinished
                copy.finished = finished
                copy.redeliverUntil = redeliverUntil
                copy.handedThrough = handedThrough
                return copy
            }
        }
    }
}

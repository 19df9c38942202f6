package import Foundation

/// Counts the work a session has in hand — inputs queued for its funnel, frames on their way to
/// the socket, tasks between two waits, events an in-memory transport has yielded and the
/// session not yet read — so that a test clock can run "until nothing more happens"
/// deterministically (SDKTesting's `TestClock.runUntilIdle()`): every unit of work is begun by
/// whoever creates it and ended by whoever finishes it, and each hand-off begins the next unit
/// before ending the last, so the count reaches zero only when nothing can move without the
/// clock. Production clocks have none: every call site is one nil check.
package protocol ActivityTracking: AnyObject, Sendable {
    func begin()
    func end()
}

/// A clock that tracks activity: a sleeper of the session's is not work while it sleeps.
package protocol ActivityTrackingClock: Clock where Duration == Swift.Duration {
    var activity: any ActivityTracking { get }
    /// Sleeps until `deadline`, ending one unit of the caller's work when the sleeper is
    /// registered and beginning one when it wakes (its deadline came, or it was cancelled) —
    /// both atomically with the clock's own bookkeeping. A sleep that returns or throws at
    /// once touches neither.
    func sleepTracked(until deadline: Instant) async throws
}

/// A transport that can count the events it yields on a connection (SDKTesting's in-memory
/// one): the session passes its tracker when it opens, and reads each event as one unit.
package protocol ActivityCountingTransport: Transport {
    func open(url: URL, headers: [String: String], subprotocols: [String], activity: any ActivityTracking) async throws -> any TransportConnection
}

/// A connection whose every event was begun on `countedActivity` when it was yielded: the
/// reader calls ``eventRead()`` once it has handed an event on, and ``readingEnded()`` when it
/// stops reading (what is left will never be read).
package protocol ActivityCountedConnection: TransportConnection {
    var countedActivity: (any ActivityTracking)? { get }
    func eventRead()
    func readingEnded()
}

/// The events a connection has yielded and its reader not yet handed on, as units of work.
package final class EventLedger: Sendable {
    package let activity: any ActivityTracking
    /// `nil` once the stream has ended (nothing more will be read).
    private let pending = Locked<Int?>(0)

    package init(_ activity: any ActivityTracking) { self.activity = activity }

    /// Yields through `yield`, as a unit of work while it waits to be read.
    package func send(_ yield: () -> Bool) {
        let counted: Bool = pending.withLock { pending in
            guard let count = pending else { return false }
            pending = count + 1
            activity.begin()
            return true
        }
        if counted, !yield() { read() }
    }

    /// One event was handed on.
    package func read() {
        let had: Bool = pending.withLock { pending in
            guard let count = pending, count > 0 else { return false }
            pending = count - 1
            return true
        }
        if had { activity.end() }
    }

    /// The reader stopped: what the stream still holds will never be read.
    package func ended() {
        let left = pending.withLock { pending in
            defer { pending = nil }
            return pending ?? 0
        }
        for _ in 0..<left { activity.end() }
    }
}

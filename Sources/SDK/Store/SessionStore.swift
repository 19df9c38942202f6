public import Foundation

/// Where a session keeps what must outlive the app's process: its outbox, the position of every
/// channel, and what its server's protocol keeps for the session. The session writes records in
/// a format of its own and reads them back at launch; a store keeps them, in order, durably.
/// Never a token or a password: the session stores no secret.
///
/// ``FileSessionStore`` is the default (a file in a directory the app chooses); `SDKTesting`'s
/// `InMemorySessionStore` can be killed in a test as a crash would. Write your own to keep the
/// records elsewhere. The session calls a store from one task at a time, never from the main
/// thread.
public protocol SessionStore: AnyObject, Sendable {
    /// Reads every record kept, in order: those that read back whole. What did not (damage) is
    /// reported in ``StoredRecords/loss``, never returned. Throws when nothing can be read —
    /// and then the store must be left as it is, unclaimed: after `notReadableYet` the session
    /// calls `load()` again each time the app comes to the foreground.
    func load() throws(SessionStoreError) -> StoredRecords
    /// Appends `records` in order, durably: once it returns they survive a kill; a kill during
    /// the call keeps a prefix of them, never a part of one.
    func append(_ records: [Data]) throws(SessionStoreError)
    /// Replaces everything kept with `records` in one step: a kill keeps the old records or the
    /// new ones, never a mix.
    func replace(with records: [Data]) throws(SessionStoreError)
    /// Lets the store go (another session may open it then).
    func close()
}

/// What a store read back.
public struct StoredRecords: Sendable, Equatable {
    /// The records, in the order they were written.
    public var records: [Data]
    /// What was stored and could not be read back, if anything.
    public var loss: StoreLoss?
    /// After damage: records found whole beyond it, in order (what lay between them and
    /// ``records`` is lost). The session does not fold them into its state; it lists the
    /// publishes among them for the app (``StoreLoss/uncertainPublishes``).
    public var salvaged: [Data]

    /// What a store read: the `records`, what was lost on the way (`loss`), and records it saved
    /// from a damaged file (`salvaged`).
    public init(records: [Data], loss: StoreLoss? = nil, salvaged: [Data] = []) {
        self.records = records
        self.loss = loss
        self.salvaged = salvaged
    }
}

/// Stored data that could not be read back (damage on the disk, not a kill: a write a kill cut
/// short was never reported as stored, and is dropped without a word).
public struct StoreLoss: Sendable, Equatable, CustomStringConvertible {
    /// How many bytes could not be read.
    public var bytes: Int
    /// What was found.
    public var reason: String
    /// Where the damaged original was kept (it is never deleted), if it was a file.
    public var damagedCopy: URL?
    /// The ids of publishes found beyond the damage, whose fate the lost records may have held
    /// (sent? acknowledged?). Each is listed in ``Session/earlierPublishes``: `waiting` where
    /// the protocol de-duplicates publishes (it is sent again with its key), else
    /// `mayHaveBeenApplied` for the app to decide — or with its outcome, where a record found
    /// beyond the damage holds it. Filled in by the session.
    public var uncertainPublishes: [String] = []

    /// A loss of `bytes` for `reason`, with where the damaged file was kept.
    public init(bytes: Int, reason: String, damagedCopy: URL? = nil) {
        self.bytes = bytes
        self.reason = reason
        self.damagedCopy = damagedCopy
    }

    public var description: String {
        "\(bytes) stored bytes could not be read (\(reason))"
            + (uncertainPublishes.isEmpty ? "" : "; \(uncertainPublishes.count) publishes found beyond the damage are listed as earlier publishes")
            + (damagedCopy.map { "; the damaged file is kept at \($0.path)" } ?? "")
    }
}

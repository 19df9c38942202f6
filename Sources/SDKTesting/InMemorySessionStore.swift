public import Foundation
public import SDK

/// A `SessionStore` in memory, for tests: it can be killed as a crash would kill the app, and
/// what it kept handed to the next launch's session (``relaunched()``). It counts its writes (a
/// burst of publishes should be one append, not one each), and can be made to fail as a disk
/// would (full, not readable yet).
///
/// ```swift
/// import SDK
/// import SDKTesting
/// import Testing
///
/// @Test func outboxOutlivesTheProcess() async throws {
///     let (server, store, lifecycle, clock) = (TestServer(), InMemorySessionStore(), LifecycleDriver(), TestClock())
///     let app = Session(settings: try .testing { $0.store(store) }, transport: server.transport(), clock: clock, lifecycle: lifecycle)
///     try await withRunningSession(app) { _ in
///         await lifecycle.background()                              // Auto mode: offline
///         Task { try await app.publish("sent offline", to: "room") }
///         for await count in app.outboxCountUpdates where count == 1 { break }
///         await clock.settle()                                      // the store's write is done
///         store.kill()                                              // the process dies here
///     }
///     let relaunched = Session(settings: try .testing { $0.store(store.relaunched()) }, transport: server.transport(), clock: clock)
///     try await withRunningSession(relaunched) { status in
///         try await status.waitFor(.connected)
///         await clock.settle()
///     }
///     #expect(server.latestSequence(of: "room") == 1)              // sent once, by the relaunch
/// }
/// ```
public final class InMemorySessionStore: SessionStore {
    private struct Shared {
        /// What survives a kill: every append that returned.
        var records: [Data] = []
        var appends = 0
        var replaces = 0
        var writeFailure: SessionStoreError?
        var readFailure: SessionStoreError?
        /// The handle that has the store open, if any.
        var owner: ObjectIdentifier?
    }

    private let shared: Locked<Shared>

    /// A store holding `records` already (as an earlier launch left them).
    public init(records: [Data] = []) {
        shared = Locked(Shared(records: records))
    }

    private init(shared: Locked<Shared>) {
        self.shared = shared
    }

    /// The records kept now: what a launch after a kill would read.
    public var records: [Data] { shared.withLock { $0.records } }
    /// How many appends and replaces returned (group commit: one per burst).
    public var writeCounts: (appends: Int, replaces: Int) { shared.withLock { ($0.appends, $0.replaces) } }

    /// The app is killed: this handle writes nothing more (its session's writes that had not
    /// returned are lost, as in a crash; later ones fail), and lets the store go.
    public func kill() {
        // Its writes fail from now on: only the handle that has the store open writes.
        shared.withLock { state in if state.owner == ObjectIdentifier(self) { state.owner = nil } }
    }

    /// A handle on what survived, for the next launch's session.
    public func relaunched() -> InMemorySessionStore { InMemorySessionStore(shared: shared) }

    /// Makes every write fail with `error` until called with `nil` (a full disk).
    public func failWrites(with error: SessionStoreError?) { shared.withLock { $0.writeFailure = error } }

    /// Makes loading fail with `error` until called with `nil` (protected data before the first
    /// unlock: `.notReadableYet`).
    public func failReads(with error: SessionStoreError?) { shared.withLock { $0.readFailure = error } }

    public func load() throws(SessionStoreError) -> StoredRecords {
        let id = ObjectIdentifier(self)
        let result: Result<StoredRecords, SessionStoreError> = shared.withLock { shared in
            if let failure = shared.readFailure { return .failure(failure) }
            // One session per store: a second load, by another handle or the same one handed to a
            // second session, is refused.
            if shared.owner != nil { return .failure(SessionStoreError(.inUse, "another session has this store open")) }
            shared.owner = id
            return .success(StoredRecords(records: shared.records))
        }
        return try result.get()
    }

    public func append(_ records: [Data]) throws(SessionStoreError) {
        try write { $0.records += records; $0.appends += 1 }
    }

    public func replace(with records: [Data]) throws(SessionStoreError) {
        try write { $0.records = records; $0.replaces += 1 }
    }

    public func close() {
        shared.withLock { if $0.owner == ObjectIdentifier(self) { $0.owner = nil } }
    }

    private func write(_ change: (inout Shared) -> Void) throws(SessionStoreError) {
        let id = ObjectIdentifier(self)
        let failure: SessionStoreError? = shared.withLock { shared in
            if let failure = shared.writeFailure { return failure }
            // A killed process writes nothing: its session's late calls change nothing, and fail
            // (so that it sends nothing it has not recorded either).
            guard shared.owner == id else { return SessionStoreError(.notWritable, "this handle does not have the store open (killed, closed, or not loaded)") }
            change(&shared)
            return nil
        }
        if let failure { throw failure }
    }
}

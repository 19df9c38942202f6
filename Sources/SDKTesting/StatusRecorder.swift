public import SDK

/// Records a session's (or a controller's) status changes from the moment it is made, so a test
/// can wait for one without missing it and without polling.
///
/// Two kinds of wait: ``waitFor(_:file:line:)-(ConnectionStatus,_,_)`` reads on from where the
/// recorder is — it can match a status recorded *before* the call and not read yet (the status
/// when recording began comes first: `statusUpdates` replays it).
/// ``waitForNext(_:file:line:)-(ConnectionStatus,_,_)`` matches only a status published *after*
/// the call — "wait for the reconnection" cannot pass on the first connection's `.connected`;
/// when what triggers the status may happen before the wait starts (a fast in-memory server),
/// take a ``mark()`` before the trigger and wait with
/// ``waitFor(_:after:file:line:)-(ConnectionStatus,_,_,_)``. ``drain()`` reads everything
/// published so far.
///
/// **No wait hangs.** Each wait gives up after ``patience`` (real time by default: a safety net
/// that turns a broken promise into a failure with a message, never a timing check) and throws
/// ``StatusRecorderError`` naming what it waited for, where, and every status it saw.
public actor StatusRecorder {
    /// A moment in the status's history (see ``mark()``).
    public struct Mark: Hashable, Sendable {
        let version: UInt64
    }

    /// How long one wait may go without its status before it fails: 10 s unless given.
    public nonisolated let patience: Duration
    /// Sleeps for a wait's patience (real time unless a test of the recorder gives another).
    private let sleep: @Sendable (Duration) async throws -> Void

    /// Every status published since recording began, in order (read or not).
    private var received: [ConnectionStatus] = []
    /// The version of `received[0]`.
    private let firstVersion: UInt64
    /// How many of `received` have been read.
    private var cursor = 0
    private var ended = false
    /// Waits parked until the next status (or the end, or their deadline).
    private var parked: [UInt64: CheckedContinuation<Void, Never>] = [:]
    private var nextTicket: UInt64 = 0
    /// The waits whose patience ran out.
    private var expired: Set<UInt64> = []
    private let currentVersion: @Sendable () -> UInt64
    /// Fired each time a wait for a later status has taken its mark (for this type's tests).
    package var waitStarted: (@Sendable () -> Void)?

    package func onWaitStarted(_ body: @escaping @Sendable () -> Void) { waitStarted = body }

    /// Every status read so far, in order (the first is the status when recording began).
    public var history: [ConnectionStatus] { Array(received[..<cursor]) }

    /// Now, in the status's history: what a later ``waitFor(_:after:file:line:)-(ConnectionStatus,_,_,_)``
    /// must not match. Synchronous, so it can be taken right before the trigger.
    public nonisolated func mark() -> Mark { Mark(version: currentVersion()) }

    /// Records `session`'s statuses; a wait fails after `patience` without its status.
    public init(_ session: Session, patience: Duration = .seconds(10)) {
        self.init(session.versionedStatusUpdates, version: { session.statusVersion }, patience: patience, sleep: { try await ContinuousClock().sleep(for: $0) })
    }

    /// Records `controller`'s statuses; a wait fails after `patience` without its status.
    public init(_ controller: ConnectionController, patience: Duration = .seconds(10)) {
        self.init(controller.versionedStatusUpdates, version: { controller.statusVersion }, patience: patience, sleep: { try await ContinuousClock().sleep(for: $0) })
    }

    /// Records `session`'s statuses; a wait's patience runs out when `sleep` returns (for tests of
    /// the recorder: never the session's own clock, which a test advances).
    package init(_ session: Session, patience: Duration, sleep: @escaping @Sendable (Duration) async throws -> Void) {
        self.init(session.versionedStatusUpdates, version: { session.statusVersion }, patience: patience, sleep: sleep)
    }

    private init(
        _ updates: (stream: AsyncStream<ConnectionStatus>, firstVersion: UInt64),
        version: @escaping @Sendable () -> UInt64, patience: Duration, sleep: @escaping @Sendable (Duration) async throws -> Void
    ) {
        firstVersion = updates.firstVersion
        currentVersion = version
        self.patience = patience
        self.sleep = sleep
        // One reader for the recorder's life: a wait that gives up never cancels the stream's
        // iterator (which would end the stream for every later wait).
        Task { [weak self, stream = updates.stream] in
            for await status in stream {
                guard let self else { return }
                await self.arrived(status)
            }
            await self?.arrivedEnd()
        }
    }

    private func arrived(_ status: ConnectionStatus) {
        received.append(status)
        wakeAll()
    }

    private func arrivedEnd() {
        ended = true
        wakeAll()
    }

    private func wakeAll() {
        let waiting = parked
        parked = [:]
        for continuation in waiting.values { continuation.resume() }
    }

    /// Starts the patience of one wait: when it runs out, the wait's ticket is expired and every
    /// parked wait wakes to look.
    private func startPatience() -> (ticket: UInt64, timer: Task<Void, Never>) {
        let ticket = nextTicket
        nextTicket += 1
        let sleep = self.sleep, patience = self.patience
        let timer = Task { [weak self] in
            guard (try? await sleep(patience)) != nil else { return }
            await self?.expire(ticket)
        }
        return (ticket, timer)
    }

    private func expire(_ ticket: UInt64) {
        expired.insert(ticket)
        wakeAll()
    }

    /// Parks until something arrives: a status, the end of the recording, or a wait's expiry.
    private func park() async {
        let ticket = nextTicket
        nextTicket += 1
        await withCheckedContinuation { parked[ticket] = $0 }
    }

    /// Runs `body` (which parks until it has what it needs or sees its ticket expired) with a
    /// patience running.
    private func withPatience<T>(_ body: (UInt64) async throws -> T) async throws -> T {
        let (ticket, timer) = startPatience()
        defer {
            timer.cancel()
            expired.remove(ticket)
        }
        return try await body(ticket)
    }

    /// The next unread status, waiting for one within ``patience``; `nil` once recording has
    /// ended and everything was read. Throws ``StatusRecorderError`` when none came in time.
    public func next(file: StaticString = #fileID, line: UInt = #line) async throws -> ConnectionStatus? {
        try await withPatience { ticket in
            while cursor == received.count {
                if ended { return nil }
                if expired.contains(ticket) {
                    throw StatusRecorderError(reason: .timedOut(after: patience), expected: "the next status", passed: [], history: history, file: file, line: line)
                }
                await park()
            }
            cursor += 1
            return received[cursor - 1]
        }
    }

    /// Reads every status published before this call and returns those not read before: after
    /// it, ``next(file:line:)`` returns only what comes later. Never waits for a new status.
    @discardableResult
    public func drain() async -> [ConnectionStatus] {
        await skip(through: mark())
    }

    /// Reads every status up to `mark` (waiting only for the reader to catch up with statuses
    /// already published).
    private func skip(through mark: Mark) async -> [ConnectionStatus] {
        var drained: [ConnectionStatus] = []
        while firstVersion + UInt64(cursor) <= mark.version {
            if cursor < received.count {
                drained.append(received[cursor])
                cursor += 1
            } else if ended {
                break
            } else {
                // Published already, so on its way to the reader: no patience is needed.
                await park()
            }
        }
        return drained
    }

    /// Waits until a status read from here on is `expected` — possibly one published before
    /// this call and not read yet; returns the statuses passed on the way. Throws
    /// ``StatusRecorderError`` if the recording ends first or ``patience`` runs out.
    @discardableResult
    public func waitFor(_ expected: ConnectionStatus, file: StaticString = #fileID, line: UInt = #line) async throws -> [ConnectionStatus] {
        try await read(expecting: "\(expected)", file: file, line: line) { $0 == expected }
    }

    /// Waits until a status read from here on matches `predicate`; see
    /// ``waitFor(_:file:line:)-(ConnectionStatus,_,_)``.
    @discardableResult
    public func waitFor(file: StaticString = #fileID, line: UInt = #line, _ predicate: (ConnectionStatus) -> Bool) async throws -> [ConnectionStatus] {
        try await read(expecting: "a status matching the predicate", file: file, line: line, predicate)
    }

    private func read(
        expecting expected: String, file: StaticString, line: UInt, _ predicate: (ConnectionStatus) -> Bool
    ) async throws -> [ConnectionStatus] {
        try await withPatience { ticket in
            var passed: [ConnectionStatus] = []
            while true {
                while cursor < received.count {
                    let status = received[cursor]
                    cursor += 1
                    passed.append(status)
                    if predicate(status) { return passed }
                }
                if ended {
                    throw StatusRecorderError(reason: .ended, expected: expected, passed: passed, history: history, file: file, line: line)
                }
                if expired.contains(ticket) {
                    throw StatusRecorderError(reason: .timedOut(after: patience), expected: expected, passed: passed, history: history, file: file, line: line)
                }
                await park()
            }
        }
    }

    /// Waits for a status published after `mark` that is `expected` (what came before is read
    /// and skipped); returns the statuses passed on the way after the mark.
    @discardableResult
    public func waitFor(
        _ expected: ConnectionStatus, after mark: Mark, file: StaticString = #fileID, line: UInt = #line
    ) async throws -> [ConnectionStatus] {
        _ = await skip(through: mark)
        waitStarted?()
        return try await read(expecting: "\(expected)", file: file, line: line) { $0 == expected }
    }

    /// Waits for a status published after `mark` that matches `predicate`.
    @discardableResult
    public func waitFor(
        after mark: Mark, file: StaticString = #fileID, line: UInt = #line, _ predicate: (ConnectionStatus) -> Bool
    ) async throws -> [ConnectionStatus] {
        _ = await skip(through: mark)
        waitStarted?()
        return try await read(expecting: "a status matching the predicate", file: file, line: line, predicate)
    }

    /// Waits for a status published **after this call** that is `expected`.
    @discardableResult
    public func waitForNext(_ expected: ConnectionStatus, file: StaticString = #fileID, line: UInt = #line) async throws -> [ConnectionStatus] {
        try await waitFor(expected, after: mark(), file: file, line: line)
    }

    /// Waits for a status published after this call that matches `predicate`.
    @discardableResult
    public func waitForNext(
        file: StaticString = #fileID, line: UInt = #line, _ predicate: (ConnectionStatus) -> Bool
    ) async throws -> [ConnectionStatus] {
        try await waitFor(after: mark(), file: file, line: line, predicate)
    }
}

public import SDK

/// Records a session's (or a controller's) status changes from the moment it is made, so a test
/// can wait for one without missing it and without polling.
///
/// Two kinds of wait: ``waitFor(_:)-(ConnectionStatus)`` reads on from where the recorder is —
/// it can match a status recorded *before* the call and not read yet (the status when
/// recording began comes first: `statusUpdates` replays it). ``waitForNext(_:)-(ConnectionStatus)``
/// matches only a status published *after* the call — "wait for the reconnection" cannot pass on
/// the first connection's `.connected`; when what triggers the status may happen before the
/// wait starts (a fast in-memory server), take a ``mark()`` before the trigger and wait with
/// ``waitFor(_:after:)-(ConnectionStatus,_)``. ``drain()`` reads everything published so far.
public actor StatusRecorder {
    /// A moment in the status's history (see ``mark()``).
    public struct Mark: Hashable, Sendable {
        let version: UInt64
    }

    private var iterator: AsyncStream<ConnectionStatus>.Iterator
    /// The version of the next status the iterator yields.
    private var nextVersion: UInt64
    private let currentVersion: @Sendable () -> UInt64
    /// Every status read so far, in order (the first is the status when recording began).
    public private(set) var history: [ConnectionStatus] = []
    /// Fired each time a wait for a later status has taken its mark (for this type's tests).
    package var waitStarted: (@Sendable () -> Void)?

    package func onWaitStarted(_ body: @escaping @Sendable () -> Void) { waitStarted = body }

    /// Now, in the status's history: what a later ``waitFor(_:after:)-(ConnectionStatus,_)`` must
    /// not match. Synchronous, so it can be taken right before the trigger.
    public nonisolated func mark() -> Mark { Mark(version: currentVersion()) }

    public init(_ session: Session) {
        let (stream, first) = session.versionedStatusUpdates
        iterator = stream.makeAsyncIterator()
        nextVersion = first
        currentVersion = { session.statusVersion }
    }

    public init(_ controller: ConnectionController) {
        let (stream, first) = controller.versionedStatusUpdates
        iterator = stream.makeAsyncIterator()
        nextVersion = first
        currentVersion = { controller.statusVersion }
    }

    /// The next status not read yet (possibly one published before this call); `nil` once the
    /// session has ended.
    public func next() async -> ConnectionStatus? {
        // AsyncStream's iterator shares its storage between copies, so a copy advances it.
        var iterator = self.iterator
        defer { self.iterator = iterator }
        guard let status = await iterator.next(isolation: self) else { return nil }
        history.append(status)
        nextVersion += 1
        return status
    }

    /// Reads every status published before this call and returns those not read before: after
    /// it, ``next()`` returns only what comes later. Never waits for a new status.
    @discardableResult
    public func drain() async -> [ConnectionStatus] {
        await skip(through: mark())
    }

    private func skip(through mark: Mark) async -> [ConnectionStatus] {
        var drained: [ConnectionStatus] = []
        while nextVersion <= mark.version, let status = await next() { drained.append(status) }
        return drained
    }

    /// Waits until a status read from here on is `expected` — possibly one published before
    /// this call and not read yet; returns the statuses passed on the way. Throws
    /// ``StatusRecorderError`` if the session ends first.
    @discardableResult
    public func waitFor(_ expected: ConnectionStatus) async throws -> [ConnectionStatus] {
        try await waitFor { $0 == expected }
    }

    /// Waits until a status read from here on matches `predicate`; see ``waitFor(_:)-(ConnectionStatus)``.
    @discardableResult
    public func waitFor(_ predicate: (ConnectionStatus) -> Bool) async throws -> [ConnectionStatus] {
        var passed: [ConnectionStatus] = []
        while let status = await next() {
            passed.append(status)
            if predicate(status) { return passed }
        }
        throw StatusRecorderError(passed: passed)
    }

    /// Waits for a status published after `mark` that is `expected` (what came before is read
    /// and skipped); returns the statuses passed on the way after the mark.
    @discardableResult
    public func waitFor(_ expected: ConnectionStatus, after mark: Mark) async throws -> [ConnectionStatus] {
        try await waitFor(after: mark) { $0 == expected }
    }

    /// Waits for a status published after `mark` that matches `predicate`.
    @discardableResult
    public func waitFor(after mark: Mark, _ predicate: (ConnectionStatus) -> Bool) async throws -> [ConnectionStatus] {
        _ = await skip(through: mark)
        waitStarted?()
        return try await waitFor(predicate)
    }

    /// Waits for a status published **after this call** that is `expected`.
    @discardableResult
    public func waitForNext(_ expected: ConnectionStatus) async throws -> [ConnectionStatus] {
        try await waitFor(expected, after: mark())
    }

    /// Waits for a status published after this call that matches `predicate`.
    @discardableResult
    public func waitForNext(_ predicate: (ConnectionStatus) -> Bool) async throws -> [ConnectionStatus] {
        try await waitFor(after: mark(), predicate)
    }
}

/// The session ended before the awaited status came.
public struct StatusRecorderError: Error, CustomStringConvertible {
    public let passed: [ConnectionStatus]
    public var description: String { "the session ended first; statuses seen: \(passed)" }
}

/// Runs `session` for the duration of `body`, with a recorder of its status, and shuts it
/// down afterwards (also when `body` throws).
@discardableResult
public func withRunningSession<Result: Sendable>(
    _ session: Session,
    _ body: (StatusRecorder) async throws -> Result
) async throws -> Result {
    let recorder = StatusRecorder(session)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await session.run() }
        do {
            let result = try await body(recorder)
            await session.shutdown()
            try await group.waitForAll()
            return result
        } catch {
            await session.shutdown()
            try? await group.waitForAll()
            throw error
        }
    }
}

/// Runs `controller` for the duration of `body`, with a recorder of its status, and shuts it
/// down afterwards (also when `body` throws).
@discardableResult
public func withRunningController<Result: Sendable>(
    _ controller: ConnectionController,
    _ body: (StatusRecorder) async throws -> Result
) async throws -> Result {
    let recorder = StatusRecorder(controller)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await controller.run() }
        do {
            let result = try await body(recorder)
            await controller.shutdown()
            try await group.waitForAll()
            return result
        } catch {
            await controller.shutdown()
            try? await group.waitForAll()
            throw error
        }
    }
}

public import SDK

/// Records a session's status changes from the moment it is made, so a test can wait for one
/// without missing it and without polling.
public actor StatusRecorder {
    private var iterator: AsyncStream<ConnectionStatus>.Iterator
    /// Every status seen so far, in order (the first is the status when recording began).
    public private(set) var history: [ConnectionStatus] = []

    public init(_ session: Session) {
        iterator = session.statusUpdates.makeAsyncIterator()
    }

    public init(_ controller: ConnectionController) {
        iterator = controller.statusUpdates.makeAsyncIterator()
    }

    /// The next status change; `nil` once the session has ended.
    public func next() async -> ConnectionStatus? {
        // AsyncStream's iterator shares its storage between copies, so a copy advances it.
        var iterator = self.iterator
        defer { self.iterator = iterator }
        guard let status = await iterator.next(isolation: self) else { return nil }
        history.append(status)
        return status
    }

    /// Waits until the status is `expected`; returns the statuses passed on the way. Throws
    /// ``StatusRecorderError`` if the session ends first.
    @discardableResult
    public func waitFor(_ expected: ConnectionStatus) async throws -> [ConnectionStatus] {
        try await waitFor { $0 == expected }
    }

    /// Waits until a status matches `predicate`; returns the statuses passed on the way.
    @discardableResult
    public func waitFor(_ predicate: (ConnectionStatus) -> Bool) async throws -> [ConnectionStatus] {
        var passed: [ConnectionStatus] = []
        while let status = await next() {
            passed.append(status)
            if predicate(status) { return passed }
        }
        throw StatusRecorderError(passed: passed)
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

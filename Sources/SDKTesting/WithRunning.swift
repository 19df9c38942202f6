public import SDK

/// Runs `session` for the duration of `body`, with a recorder of its status (whose waits give
/// up after `patience`: more for real servers, which take real time), and shuts it down
/// afterwards (also when `body` throws).
@discardableResult
public func withRunningSession<Result: Sendable>(
    _ session: Session,
    patience: Duration = .seconds(10),
    _ body: (StatusRecorder) async throws -> Result
) async throws -> Result {
    let recorder = StatusRecorder(session, patience: patience)
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

/// Runs `controller` for the duration of `body`, with a recorder of its status (whose waits give
/// up after `patience`: more for real servers, which take real time), and shuts it down
/// afterwards (also when `body` throws).
@discardableResult
public func withRunningController<Result: Sendable>(
    _ controller: ConnectionController,
    patience: Duration = .seconds(10),
    _ body: (StatusRecorder) async throws -> Result
) async throws -> Result {
    let recorder = StatusRecorder(controller, patience: patience)
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

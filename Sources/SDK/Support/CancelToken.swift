/// A one-shot signal: `fire()` once, `wait()` from any number of tasks. Used to cancel one
/// child of the session's task group (a timer, an attempt) without cancelling the group, and to
/// tell when a closing socket is closed.
package final class OneShot: Sendable {
    private enum State {
        case waiting([UInt64: CheckedContinuation<Void, Never>], next: UInt64)
        case fired
    }

    private let state = Locked<State>(.waiting([:], next: 0))

    package init() {}

    package var hasFired: Bool {
        state.withLock { if case .fired = $0 { true } else { false } }
    }

    package func fire() {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { state in
            guard case .waiting(let waiters, _) = state else { return [] }
            state = .fired
            return Array(waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once fired, or once the calling task is cancelled.
    package func wait() async {
        let key: UInt64? = state.withLock { state in
            guard case .waiting(let waiters, let next) = state else { return nil }
            state = .waiting(waiters, next: next + 1)
            return next
        }
        guard let key else { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow: Bool = state.withLock { state in
                    guard case .waiting(var waiters, let next) = state else { return true }
                    // Cancelled before the continuation was registered: the cancellation handler
                    // ran and found nothing to resume, so resume now. (Checked under the lock
                    // that the handler takes too: one of the two always resumes, never both.)
                    if Task.isCancelled { return true }
                    waiters[key] = continuation
                    state = .waiting(waiters, next: next)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
                guard case .waiting(var waiters, let next) = state else { return nil }
                let waiter = waiters.removeValue(forKey: key)
                state = .waiting(waiters, next: next)
                return waiter
            }
            waiter?.resume()
        }
    }
}

extension OneShot {
    /// Waits until fired or until `limit` has passed (on the continuous clock); true when fired.
    /// For waits with a deadline in examples and integration tests.
    package func wait(upTo limit: Duration) async -> Bool {
        if hasFired { return true }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await self.wait()
                return true
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            let first = await group.next()!
            group.cancelAll()
            return first || hasFired
        }
    }
}

/// Runs `work` until it finishes or `cancel` fires. Returns the work's result, if it finished
/// (even just after the cancel: a socket opened in that instant must still be closed by the
/// caller), and whether `cancel` fired. The work is cancelled and awaited, so nothing outlives
/// the call.
func race<T: Sendable>(_ work: @escaping @Sendable () async throws -> T, cancelledBy cancel: OneShot) async -> (result: Result<T, any Error>?, cancelled: Bool) {
    if cancel.hasFired { return (nil, true) }
    return await withTaskGroup(of: RaceOutcome<T>.self) { group in
        group.addTask {
            do { return .finished(.success(try await work())) } catch { return .finished(.failure(error)) }
        }
        group.addTask {
            await cancel.wait()
            return .cancelSignalled
        }
        var result: Result<T, any Error>?
        while let outcome = await group.next() {
            if case .finished(let finished) = outcome { result = finished }
            group.cancelAll()
        }
        return (result, cancel.hasFired)
    }
}

private enum RaceOutcome<T: Sendable>: Sendable {
    case finished(Result<T, any Error>)
    case cancelSignalled
}

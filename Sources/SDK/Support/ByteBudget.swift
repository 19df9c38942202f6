/// A budget of bytes in flight between a reader and what takes what it read: the reader waits for
/// room before it hands more over (``acquire(_:)``), the taker gives the room back
/// (``release(_:)``). One handover always goes when nothing is in flight, however large, so a
/// single read bigger than the budget never waits forever. One reader at a time.
package final class ByteBudget: Sendable {
    /// The bytes in flight it waits below.
    package let limit: Int
    private let state = Locked(State())

    private struct State {
        var inFlight = 0
        var waiter: (continuation: CheckedContinuation<Void, Never>, bytes: Int)?
        var cancelled = false
    }

    /// Called when a reader starts waiting for room (tests wait for it).
    private let onWait: (@Sendable () -> Void)?

    package init(limit: Int, onWait: (@Sendable () -> Void)? = nil) {
        self.limit = limit
        self.onWait = onWait
    }

    /// The bytes handed over and not given back yet.
    package var inFlight: Int { state.withLock { $0.inFlight } }

    /// Waits until `bytes` fit, then counts them in flight. Returns at once, without counting
    /// them, when the task is cancelled (the reader is being let go).
    package func acquire(_ bytes: Int) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let admitted = state.withLock { state -> Bool in
                    if state.cancelled { return true }
                    if Self.fits(bytes, state.inFlight, limit) {
                        state.inFlight += bytes
                        return true
                    }
                    state.waiter = (continuation, bytes)
                    return false
                }
                if admitted { continuation.resume() } else { onWait?() }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                state.cancelled = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.continuation.resume()
        }
    }

    /// Gives `bytes` back; a reader waiting for room goes on once its bytes fit.
    package func release(_ bytes: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.inFlight = max(0, state.inFlight - bytes)
            guard let waiter = state.waiter, Self.fits(waiter.bytes, state.inFlight, limit) else { return nil }
            state.inFlight += waiter.bytes
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume()
    }

    private static func fits(_ bytes: Int, _ inFlight: Int, _ limit: Int) -> Bool {
        inFlight == 0 || inFlight + bytes <= limit
    }
}

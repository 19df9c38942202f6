import SDK

/// A connection's writer queue. The core's outputs go in as they come; the writer takes
/// everything queued at once, so what the server produced while the writer was busy (the
/// answers to a replay's hundred requests) leaves in one write and one flush, not one each.
final class OutboundQueue: Sendable {
    private struct State {
        var items: [RealtimeServer.Outbound] = []
        var waiter: CheckedContinuation<[RealtimeServer.Outbound]?, Never>?
        var finished = false
    }

    private let state = Locked(State())

    /// Queues `item` (dropped once the queue is finished).
    func yield(_ item: RealtimeServer.Outbound) {
        let waiter = state.withLock { state -> CheckedContinuation<[RealtimeServer.Outbound]?, Never>? in
            guard !state.finished else { return nil }
            guard let waiter = state.waiter else {
                state.items.append(item)
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: [item])
    }

    /// No more items: the writer takes what is queued, then its `next()` returns `nil`.
    func finish() {
        let waiter = state.withLock { state in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Everything queued, in order; waits while nothing is. `nil` once finished and drained, or
    /// when the calling task is cancelled.
    func next() async -> [RealtimeServer.Outbound]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[RealtimeServer.Outbound]?, Never>) in
                let ready = state.withLock { state -> [RealtimeServer.Outbound]?? in
                    if !state.items.isEmpty {
                        defer { state.items = [] }
                        return .some(state.items)
                    }
                    if state.finished || Task.isCancelled { return .some(nil) }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                state.finished = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }
}

/// Hands a value's changes to subscribers, one delivery at a time per subscriber, and lets the
/// sender await their handling: the heart of the manual lifecycle source and network monitor.
/// A subscriber first receives the value as it is when it subscribes, so nothing set before
/// the subscription is missed.
final class ChangeHub<Value: Sendable & Equatable>: Sendable {
    private struct Delivery: Sendable {
        let value: Value
        let handled: [OneShot]
    }

    private struct State {
        var value: Value
        var subscribers: [UInt64: AsyncStream<Delivery>.Continuation] = [:]
        var nextID: UInt64 = 0
        /// Senders that found no subscriber wait for the first one to handle the value.
        var waitingForSubscriber: [OneShot] = []
    }

    private let state: Locked<State>

    init(_ initial: Value) {
        state = Locked(State(value: initial))
    }

    var value: Value { state.withLock { $0.value } }

    /// Sets the value and returns once every subscriber has handled it (once the first
    /// subscriber has, when there is none yet).
    func send(_ value: Value) async {
        let handled = post(value, waitForSubscriber: true)
        for signal in handled { await signal.wait() }
    }

    /// Sets the value without waiting.
    @discardableResult
    func post(_ value: Value, waitForSubscriber: Bool = false) -> [OneShot] {
        state.withLock { state in
            state.value = value
            if state.subscribers.isEmpty {
                guard waitForSubscriber else { return [] }
                let signal = OneShot()
                state.waitingForSubscriber.append(signal)
                return [signal]
            }
            return state.subscribers.values.map { continuation in
                let signal = OneShot()
                continuation.yield(Delivery(value: value, handled: [signal]))
                return signal
            }
        }
    }

    /// Hands the current value and then each change to `handler`, awaiting each, until the
    /// calling task is cancelled.
    func deliver(to handler: @Sendable (Value) async -> Void) async {
        let (stream, continuation) = AsyncStream<Delivery>.makeStream()
        let id: UInt64 = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = continuation
            continuation.yield(Delivery(value: state.value, handled: state.waitingForSubscriber))
            state.waitingForSubscriber = []
            return id
        }
        await withTaskCancellationHandler {
            for await delivery in stream {
                await handler(delivery.value)
                for signal in delivery.handled { signal.fire() }
            }
        } onCancel: {
            continuation.finish()
        }
        let leftover: AsyncStream<Delivery>.Continuation? = state.withLock { $0.subscribers.removeValue(forKey: id) }
        leftover?.finish()
    }

    /// The current value, then each change, as a stream.
    func values() -> AsyncStream<Value> {
        AsyncStream { continuation in
            let task = Task {
                await self.deliver { continuation.yield($0) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

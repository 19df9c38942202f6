/// Tasks waiting for a count to reach a target (open connections, messages received), kept
/// inside some other lock-protected state: `register` under the lock, `wait` outside it,
/// `ready` under the lock after each change, and fire the signals it returns outside it.
package struct CountWaiters: Sendable {
    package enum Condition: Sendable {
        /// The count equals the target.
        case exactly
        /// The count is at least the target.
        case atLeast

        func holds(_ count: Int, _ target: Int) -> Bool {
            switch self {
            case .exactly: count == target
            case .atLeast: count >= target
            }
        }
    }

    private let condition: Condition
    private var waiters: [(target: Int, signal: OneShot)] = []

    package init(_ condition: Condition) {
        self.condition = condition
    }

    /// A signal to wait on, or `nil` when `count` already meets `target`.
    package mutating func register(target: Int, count: Int) -> OneShot? {
        guard !condition.holds(count, target) else { return nil }
        let signal = OneShot()
        waiters.append((target, signal))
        return signal
    }

    /// The signals whose target `count` now meets (removed from the waiters).
    package mutating func ready(count: Int) -> [OneShot] {
        let condition = self.condition
        let ready = waiters.filter { condition.holds(count, $0.target) }.map(\.signal)
        waiters.removeAll { condition.holds(count, $0.target) }
        return ready
    }
}

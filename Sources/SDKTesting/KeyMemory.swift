/// The idempotency keys of one channel's recent publishes, oldest first.
struct KeyMemory: Sendable {
    private var sequences: [String: UInt64] = [:]
    private var order: [(key: String, at: Duration)] = []
    private var head = 0

    /// The sequence number a key got, if it is remembered and within the window.
    mutating func sequence(for key: String, now: Duration, window: Duration) -> UInt64? {
        expire(now: now, window: window)
        return sequences[key]
    }

    mutating func remember(_ key: String, sequence: UInt64, now: Duration, window: Duration, limit: Int) {
        expire(now: now, window: window)
        guard limit > 0 else { return }
        sequences[key] = sequence
        order.append((key, now))
        while order.count - head > limit { forgetOldest() }
    }

    private mutating func expire(now: Duration, window: Duration) {
        while head < order.count, now - order[head].at > window { forgetOldest() }
        if head > 1024, head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }

    /// A key is remembered only when it is not already (the core checks first), so it is in
    /// `order` once: forgetting the oldest entry forgets its key.
    private mutating func forgetOldest() {
        sequences[order[head].key] = nil
        head += 1
    }
}

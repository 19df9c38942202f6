extension Session {
    /// The deadlines of a set of requests, watched by one timer armed for the earliest (a replay
    /// sends hundreds of subscribes at once; one timer each would be hundreds of tasks). Pure:
    /// each change says what to do with the timer, and the session does it.
    struct Deadlines {
        /// What to do with the set's timer.
        enum TimerChange: Equatable {
            /// The armed timer (or none, when the set is empty) is still right.
            case keep
            /// (Re)arm it to fire after this delay.
            case arm(Duration)
            /// Cancel it: no deadline is left.
            case cancel
        }

        /// Every request's deadline and the timeout it was given.
        private(set) var entries: [RequestID: (deadline: SessionClock.Instant, timeout: Duration)] = [:]
        /// When the timer is armed to fire, if it is.
        private(set) var armedFor: SessionClock.Instant?

        var isEmpty: Bool { entries.isEmpty }

        /// Room for `count` more requests (a replay's), so the table does not grow step by step.
        mutating func reserveCapacity(_ count: Int) { entries.reserveCapacity(entries.count + count) }

        /// Request `id` fails if no reply comes by `deadline` (`timeout` after it was sent).
        mutating func add(_ id: RequestID, deadline: SessionClock.Instant, timeout: Duration, remaining: Duration) -> TimerChange {
            entries[id] = (deadline, timeout)
            // The armed timer fires by then: it will find this request too.
            if let armedFor, armedFor <= deadline { return .keep }
            armedFor = deadline
            return .arm(remaining)
        }

        /// Request `id` was answered, or is gone: its deadline no longer counts.
        mutating func remove(_ id: RequestID) -> TimerChange {
            guard entries.removeValue(forKey: id) != nil, entries.isEmpty, armedFor != nil else { return .keep }
            armedFor = nil
            return .cancel
        }

        /// The timer fired: the requests whose deadline passed (`remaining` says how long each
        /// has left, ≤ 0 when passed), oldest first as one timer each would have fired them, and
        /// the timer for the earliest that remains.
        mutating func expire(remaining: (SessionClock.Instant) -> Duration) -> (expired: [(id: RequestID, timeout: Duration)], timer: TimerChange) {
            armedFor = nil
            var expired: [(id: RequestID, timeout: Duration, remaining: Duration)] = []
            var earliest: (deadline: SessionClock.Instant, remaining: Duration)?
            for (id, entry) in entries {
                let left = remaining(entry.deadline)
                if left <= .zero {
                    expired.append((id, entry.timeout, left))
                } else if earliest.map({ left < $0.remaining }) ?? true {
                    earliest = (entry.deadline, left)
                }
            }
            for entry in expired { entries[entry.id] = nil }
            var timer = TimerChange.keep
            if let earliest {
                armedFor = earliest.deadline
                timer = .arm(earliest.remaining)
            }
            let oldestFirst = expired.sorted { ($0.remaining, $0.id) < ($1.remaining, $1.id) }
            return (oldestFirst.map { ($0.id, $0.timeout) }, timer)
        }
    }
}

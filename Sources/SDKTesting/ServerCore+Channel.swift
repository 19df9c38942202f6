import SDK

extension ServerCore {
    /// A stored message: its number and its frame, encoded once when it was accepted.
    struct Retained {
        let sequence: UInt64
        let frame: TransportFrame
    }

    /// A channel: its latest sequence number, what it keeps for catch-ups, its subscribers and
    /// the publish keys it remembers.
    struct Channel {
        var latest: UInt64 = 0
        /// The kept messages are `retainedStorage[retainedHead...]`: dropping the oldest moves an
        /// index, not the whole buffer (compacted once half of it is dropped).
        var retainedStorage: [Retained] = []
        var retainedHead = 0
        var retained: ArraySlice<Retained> { retainedStorage[retainedHead...] }

        /// The kept messages after `since`, found by binary search (they are in sequence order):
        /// a catch-up of a thousand channels read every channel's whole retention.
        func retained(after since: UInt64) -> ArraySlice<Retained> {
            let kept = retained
            var low = kept.startIndex
            var high = kept.endIndex
            while low < high {
                let middle = low + (high - low) / 2
                if kept[middle].sequence > since { high = middle } else { low = middle + 1 }
            }
            return kept[low...]
        }

        mutating func retain(_ message: Retained, limit: Int) {
            retainedStorage.append(message)
            if retainedStorage.count - retainedHead > limit { retainedHead = retainedStorage.count - limit }
            if retainedHead > 0, retainedHead * 2 >= retainedStorage.count {
                retainedStorage.removeFirst(retainedHead)
                retainedHead = 0
            }
        }

        var subscribers: Set<ConnectionID> = []
        var keys = KeyMemory()

        /// `subscriber` joins, asking for what came after `since`: the latest sequence, the kept
        /// messages it missed, and whether some it missed are no longer kept.
        mutating func join(_ subscriber: ConnectionID, since: UInt64?) -> (latest: UInt64, missed: ArraySlice<Retained>, gap: Bool) {
            subscribers.insert(subscriber)
            guard let since, since < latest else { return (latest, [], false) }
            let oldest = retained.first?.sequence ?? latest + 1
            return (latest, retained(after: since), oldest > since + 1)
        }
    }
}

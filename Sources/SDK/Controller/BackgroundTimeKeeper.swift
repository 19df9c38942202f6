/// Holds background execution time exactly while a link needs it: in the background, while a
/// connection is open or opening, and until the close of one torn down there is done; never in
/// the foreground, never once its owner finished. Every begin is matched by one end. Used by
/// ``ControlRuntimeHost`` (``Session`` and ``ConnectionController`` alike), which calls
/// ``reconcile(_:)`` whenever what it depends on changed.
package struct BackgroundTimeKeeper: Sendable {
    /// What the owner knows now.
    package struct Facts {
        package var isForeground: Bool
        package var isLinked: Bool
        package var isFinished: Bool
        /// Fires once the last connection is closed.
        package var lastClosed: OneShot?
    }

    /// What the owner must do after a reconcile.
    package enum Step {
        /// Hand `input` to the funnel once `closed` fired (the close of a link torn down here).
        case watchClose(OneShot, serial: UInt64)
        case log(String)
    }

    private struct Hold {
        let serial: UInt64
        let grant: any BackgroundTimeGrant
    }

    private let provider: any BackgroundTimeProvider
    private let name: String
    /// Called (from any thread) with the hold's serial when the OS takes it back.
    private let expired: @Sendable (UInt64) -> Void
    private var hold: Hold?
    private var closeFlush: OneShot?
    private var nextSerial: UInt64 = 0

    package init(provider: any BackgroundTimeProvider, name: String, expired: @escaping @Sendable (UInt64) -> Void) {
        self.provider = provider
        self.name = name
        self.expired = expired
    }

    package var isHeld: Bool { hold != nil }
    package var isClosePending: Bool { closeFlush != nil }

    /// Indicates that background time is needed with `facts`.
    package func isNeeded(_ facts: Facts) -> Bool {
        guard !facts.isForeground, !facts.isFinished else { return false }
        return facts.isLinked || closeFlush != nil
    }

    /// Begins or ends the hold to match `facts`.
    package mutating func reconcile(_ facts: Facts) -> [Step] {
        var steps: [Step] = []
        if !facts.isLinked, let flush = closeFlush, flush.hasFired { closeFlush = nil }
        if !facts.isLinked, closeFlush == nil, let held = hold, !facts.isForeground, !facts.isFinished,
           let closed = facts.lastClosed, !closed.hasFired {
            // Torn down in the background: keep the time until the close is done.
            closeFlush = closed
            steps.append(.watchClose(closed, serial: held.serial))
        }
        if facts.isForeground || facts.isFinished { closeFlush = nil }
        let wanted = isNeeded(facts)
        if wanted, hold == nil {
            nextSerial += 1
            let serial = nextSerial
            let expired = self.expired
            hold = Hold(serial: serial, grant: provider.begin(name) { expired(serial) })
            steps.append(.log("background time held"))
        } else if !wanted, let held = hold {
            hold = nil
            held.grant.end()
            steps.append(.log("background time released"))
        }
        return steps
    }

    /// The close watched under `serial` is done; true when that still matters (reconcile next).
    package mutating func closeDone(serial: UInt64) -> Bool {
        guard hold?.serial == serial else { return false }
        closeFlush = nil
        return true
    }

    /// The OS took back the time held under `serial`: true when it was the current hold (the
    /// owner closes its link in order now). The grant is ended, once.
    package mutating func expired(serial: UInt64) -> Bool {
        guard let held = hold, held.serial == serial else { return false }
        hold = nil
        closeFlush = nil
        held.grant.end()
        return true
    }
}

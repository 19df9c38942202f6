extension Session {
    /// A background refresh in progress.
    struct Refresh {
        let waiter: CheckedContinuation<RecoveryReport, any Error>
        /// Indicates that the refresh opened the connection itself (the policy does not know it).
        var ownsLink: Bool
        let statusBefore: ConnectionStatus
    }

    /// For the operating system's short background windows (`BGAppRefreshTask`, SwiftUI's
    /// `.backgroundTask(.appRefresh)`): connects, replays, catches up, flushes the outbox, lets
    /// go, and returns the recovery report — within `deadline`, or throws `timedOut`.
    ///
    /// It works in either mode and leaves the policy as it was: a connection the refresh opens
    /// is its own (the policy never hears of it) and is closed when the refresh ends, unless the
    /// policy asked for a connection meanwhile (then the policy takes it over). When the policy's
    /// connection is already open and recovered, it returns at once.
    public func refresh(within deadline: Duration) async throws -> RecoveryReport {
        try refuseIfEnded("refresh(within:)")
        ensureStarted()
        guard refresh == nil else { throw SessionError(.invalidArgument, "a refresh is already running") }
        guard deadline > .zero else { throw SessionError(.invalidArgument, "the deadline must be positive (got \(deadline))") }
        if case .open = link, recovery == nil {
            return RecoveryReport(trigger: .backgroundRefresh, duration: .zero, steps: [], caughtUp: [:], gaps: [], outboxFlushed: 0)
        }
        return try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<RecoveryReport, any Error>) in
            refresh = Refresh(waiter: waiter, ownsLink: false, statusBefore: status)
            arm(.refreshDeadline, after: deadline)
            if case .idle = link {
                refresh?.ownsLink = true
                pendingTrigger = .backgroundRefresh
                startAttempt()
            }
        }
    }

    /// The refresh's recovery is done: hand over the report; let go of a connection it owns.
    func completeRefresh(with report: RecoveryReport) {
        guard let current = refresh else { return }
        refresh = nil
        cancelTimer(.refreshDeadline)
        if current.ownsLink {
            teardownLink(code: .normal, reason: "background refresh done")
            setStatus(current.statusBefore)
        }
        current.waiter.resume(returning: report)
    }

    /// The refresh cannot finish: release what it owns, restore the status it found.
    func failRefresh(_ error: SessionError) {
        guard let current = refresh else { return }
        refresh = nil
        cancelTimer(.refreshDeadline)
        if current.ownsLink {
            teardownLink(code: .normal, reason: "background refresh ended")
            failAllRequests(error)
            abandonRecovery()
            setStatus(current.statusBefore)
        }
        current.waiter.resume(throwing: error)
    }

    /// The policy wants the connection the refresh opened: it is the policy's now.
    func policyTakesOverRefreshLink() {
        guard refresh?.ownsLink == true else { return }
        refresh?.ownsLink = false
        if case .open = link { decide("connection opened (taken over from a background refresh)") { $0.connectionOpened() } }
    }

    var refreshOwnsLink: Bool { refresh?.ownsLink == true }
}

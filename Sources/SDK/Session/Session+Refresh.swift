extension Session {
    /// A background refresh in progress.
    struct Refresh {
        let waiter: CheckedContinuation<RecoveryReport, any Error>
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
    ///
    /// A refresh the system scheduled is `discretionary` (the default): on a constrained path
    /// (Low Data Mode) it is deferred — it throws ``SessionError/Code/deferred`` at once, opening
    /// nothing — unless ``AppSettings/powerSaving`` is off. One the user asked for (pull to
    /// refresh) passes `discretionary: false` and runs in every condition.
    public func refresh(within deadline: Duration, discretionary: Bool = true) async throws -> RecoveryReport {
        try refuseIfEnded("refresh(within:)")
        ensureStarted()
        guard refresh == nil else { throw SessionError(.invalidArgument, "a refresh is already running") }
        guard deadline > .zero else { throw SessionError(.invalidArgument, "the deadline must be positive (got \(deadline))") }
        if case .open = link, recovery == nil {
            return RecoveryReport(trigger: .backgroundRefresh, duration: .zero, steps: [], caughtUp: [:], gaps: [], outboxFlushed: 0)
        }
        if discretionary, settings.powerSaving.isEnabled, runtime.control.conditions.isConstrained {
            settings.logger.log(.info, "background refresh deferred: the path is constrained (Low Data Mode)")
            throw SessionError(
                .deferred, "the background refresh was deferred: the path is constrained (Low Data Mode); refresh(within:discretionary: false) runs it anyway"
            )
        }
        return try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<RecoveryReport, any Error>) in
            refresh = Refresh(waiter: waiter, statusBefore: status)
            arm(.refreshDeadline, after: deadline)
            if case .idle = link, runtime.control.phase == .idle {
                next.trigger = .backgroundRefresh
                if let (_, effects) = runtime.control.openUnowned() { perform(effects) }
            }
        }
    }

    /// The refresh's recovery is done: hand over the report; let go of a connection it owns.
    func completeRefresh(with report: RecoveryReport) {
        guard let current = refresh else { return }
        refresh = nil
        cancelTimer(.refreshDeadline)
        if refreshOwnsLink {
            perform(runtime.control.returnUnowned())
            setStatus(current.statusBefore)
        }
        current.waiter.resume(returning: report)
    }

    /// The refresh cannot finish: release what it owns, restore the status it found.
    func failRefresh(_ error: SessionError) {
        guard let current = refresh else { return }
        refresh = nil
        cancelTimer(.refreshDeadline)
        if refreshOwnsLink {
            teardownLink(code: .normal, reason: "background refresh ended")
            perform(runtime.control.returnUnowned())
            failAllRequests(error)
            abandonRecovery()
            setStatus(current.statusBefore)
        }
        current.waiter.resume(throwing: error)
    }

    /// Indicates that the connection (or the attempt) is the background refresh's, not the
    /// policy's (the controller's state machine knows which).
    var refreshOwnsLink: Bool { runtime.control.isUnowned }
}

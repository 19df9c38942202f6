import ConnectionPolicy

extension Session {
    /// The name the session's background time is asked for under (seen in Xcode's debugger).
    static let backgroundTimeName = "Tether realtime connection"

    /// What the background time depends on now: in the background, a socket open or opening
    /// (the policy's choice: Manual's window, Auto's grace, a refresh), or the close frame of
    /// one torn down there not yet written.
    var backgroundFacts: BackgroundTimeKeeper.Facts {
        let isLinked: Bool = if case .idle = link { false } else { true }
        return BackgroundTimeKeeper.Facts(isForeground: lifecycle.isForeground, isLinked: isLinked, isFinished: runPhase == .finished, lastClosed: lastAttemptSettled)
    }

    /// Holds background time exactly while it is needed: every begin matched by one end. Called
    /// whenever what it depends on changes (the lifecycle, the link, the run phase).
    func reconcileBackgroundTime() {
        let sink = inputSink
        for step in backgroundKeeper.reconcile(backgroundFacts, expired: { serial in sink.yield(.backgroundTimeExpired(serial: serial)) }) {
            switch step {
            case .watchClose(let closed, let serial):
                spawn(.whenFired(closed, then: .backgroundCloseFlushed(serial: serial)))
            case .log(let text):
                settings.logger.log(.debug, "\(text) (\(lifecycle), socket \(link.summary))")
            }
        }
    }

    /// The close frame of a connection torn down in the background is written.
    func backgroundCloseFlushed(serial: UInt64) {
        if backgroundKeeper.closeDone(serial: serial) { reconcileBackgroundTime() }
    }

    /// The OS took the background time back before the policy was done with the connection: close
    /// it in order now (iOS suspends the app next, socket and all), with its own reason, and let
    /// the policy apply its rule for a loss in the background. (The grant was expired; the
    /// keeper ends it, once.)
    func backgroundTimeExpired(serial: UInt64) {
        guard backgroundKeeper.expired(serial: serial) else { return }
        settings.logger.log(.notice, "the OS took back the background time: closing the connection before the app is suspended")
        switch link {
        case .idle:
            break
        case .opening, .authenticating, .open:
            let reason = DisconnectReason.backgroundTimeExpired
            if refreshOwnsLink {
                teardownLink(code: .goingAway, reason: "background time expired")
                failAllRequests(SessionError(.connectionLost, "the background time expired", reason: reason))
                failRefresh(SessionError(.timedOut, "the OS took back the background time before the refresh was done", reason: reason))
            } else {
                connectionEnded(reason: reason, disposition: .retry, closeCode: .goingAway)
            }
        }
    }
}

extension Session.Link {
    /// A word for logs.
    var summary: String {
        switch self {
        case .idle: "none"
        case .opening: "opening"
        case .authenticating: "authenticating"
        case .open: "open"
        }
    }
}

extension Session {
    /// What is wrong with the background time held now, or `nil`: it is held exactly when
    /// ``needsBackgroundTime`` (for the property tests and the chaos checker).
    package var backgroundTimeProblem: String? {
        let held = backgroundKeeper.isHeld
        guard held != backgroundKeeper.isNeeded(backgroundFacts) else { return nil }
        return "background time \(held ? "held" : "not held") with the app \(lifecycle), socket \(link.summary), "
            + "close \(backgroundKeeper.isClosePending ? "pending" : "written"), run \(runPhase)"
    }
}

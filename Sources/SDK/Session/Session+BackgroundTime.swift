import ConnectionPolicy

extension Session {
    /// The name the session's background time is asked for under (seen in Xcode's debugger).
    static let backgroundTimeName = "Tether realtime connection"

    var isLinked: Bool { if case .idle = link { false } else { true } }

    func logBackgroundTime(_ text: String) {
        settings.logger.log(.debug, "\(text) (\(lifecycle), socket \(link.summary))")
    }

    /// The OS took the background time back before the policy was done with the connection: close
    /// it in order now (iOS suspends the app next, socket and all), with its own reason, and let
    /// the policy apply its rule for a loss in the background. (The grant was expired; the
    /// keeper ends it, once.)
    func backgroundTimeTakenBack() {
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
        backgroundTimeDiscrepancy.map { "\($0), socket \(link.summary)" }
    }
}

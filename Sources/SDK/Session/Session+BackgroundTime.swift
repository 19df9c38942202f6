import ConnectionPolicy

extension Session {
    /// Background time the session holds, under a serial that tells its expiration apart from an
    /// earlier grant's.
    struct BackgroundHold {
        let serial: UInt64
        let grant: any BackgroundTimeGrant
    }

    /// The name the session's background time is asked for under (seen in Xcode's debugger).
    static let backgroundTimeName = "Tether realtime connection"

    /// Indicates that the session needs background time now: in the background, while a socket
    /// is open or opening (the policy's choice: Manual's window, Auto's grace, a refresh), or
    /// until the close frame of one torn down there is written — never in the foreground,
    /// never once the session has finished.
    var needsBackgroundTime: Bool {
        guard !lifecycle.isForeground, runPhase != .finished else { return false }
        if case .idle = link { return backgroundCloseFlush != nil }
        return true
    }

    /// Holds background time exactly while ``needsBackgroundTime``: every begin matched by one
    /// end. Called whenever what it depends on changes (the lifecycle, the link, the run phase).
    func reconcileBackgroundTime() {
        if case .idle = link, let flush = backgroundCloseFlush, flush.hasFired {
            backgroundCloseFlush = nil
        }
        if case .idle = link, backgroundCloseFlush == nil, backgroundGrant != nil, !lifecycle.isForeground, runPhase != .finished,
           let settled = lastAttemptSettled, !settled.hasFired {
            // Torn down in the background: keep the time until the close frame is written.
            backgroundCloseFlush = settled
            spawn(.whenFired(settled, then: .backgroundCloseFlushed(serial: backgroundGrant!.serial)))
        }
        if lifecycle.isForeground || runPhase == .finished { backgroundCloseFlush = nil }
        let wanted = needsBackgroundTime
        if wanted, backgroundGrant == nil {
            let serial = makeSerial()
            let sink = inputSink
            let grant = backgroundTime.begin(Self.backgroundTimeName) {
                sink.yield(.backgroundTimeExpired(serial: serial))
            }
            backgroundGrant = BackgroundHold(serial: serial, grant: grant)
            settings.logger.log(.debug, "background time held (\(lifecycle), socket \(link.summary))")
        } else if !wanted, let held = backgroundGrant {
            backgroundGrant = nil
            held.grant.end()
            settings.logger.log(.debug, "background time released")
        }
    }

    /// The close frame of a connection torn down in the background is written.
    func backgroundCloseFlushed(serial: UInt64) {
        guard backgroundGrant?.serial == serial else { return }
        backgroundCloseFlush = nil
        reconcileBackgroundTime()
    }

    /// The OS took the background time back before the policy was done with the connection: close
    /// it in order now (iOS suspends the app next, socket and all), with its own reason, and let
    /// the policy apply its rule for a loss in the background.
    func backgroundTimeExpired(serial: UInt64) {
        guard let held = backgroundGrant, held.serial == serial else { return }
        settings.logger.log(.notice, "the OS took back the background time: closing the connection before the app is suspended")
        backgroundGrant = nil
        backgroundCloseFlush = nil
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
        // Nothing more can be asked for in this background period: the close goes out now or
        // never. The grant was expired; it is still ended, once.
        held.grant.end()
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
        let held = backgroundGrant != nil
        guard held != needsBackgroundTime else { return nil }
        return "background time \(held ? "held" : "not held") with the app \(lifecycle), socket \(link.summary), "
            + "close \(backgroundCloseFlush == nil ? "written" : "pending"), run \(runPhase)"
    }
}

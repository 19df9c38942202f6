import SDK
import SDKTesting
import Testing

extension AppSettings.Builder {
    /// The timings every test against a real third-party server uses: a 1 s heartbeat, a quick
    /// backoff without jitter, 3 s timeouts, stable after 200 ms.
    func peerTestTimings() -> AppSettings.Builder {
        heartbeat(interval: .seconds(1), timeout: .seconds(1))
            .reconnectBackoff(Backoff(initial: .milliseconds(100), multiplier: 2, maximum: .milliseconds(500), jitter: 0))
            .connectTimeout(.seconds(3))
            .requestTimeout(.seconds(3))
            .stableConnectionAfter(.milliseconds(200))
    }
}

/// Manual mode against a real server: `connect()`, background without pinging, and the watchdog
/// (set short in `settings`) ends the connection.
func expectManualWatchdog(_ settings: AppSettings, transport: any Transport) async throws {
    let lifecycle = LifecycleDriver()
    let session = Session(settings: settings, transport: transport, lifecycle: lifecycle)
    try await withRunningSession(session, patience: .realServer) { status in
        try await session.connect()
        await lifecycle.background()
        #expect(session.status == .connected, "Manual keeps the connection in the background")
        try await status.waitFor(.disconnected(.watchdogExpired))
    }
}

/// The server rejects the credentials: the session ends as `credentialsRejected` and opens no
/// socket after that. (An attempt that failed for another reason first — a connect timeout on a
/// loaded machine — is a retry the policy may make; after the rejection, none.)
func expectRejectedWithoutRetry(_ status: StatusRecorder, session: Session, transport: CountingTransport) async throws {
    try await status.waitFor { if case .disconnected(let reason) = $0 { reason.code == .credentialsRejected } else { false } }
    // No retry can come: none is scheduled (what decides it, whatever the machine's load).
    #expect(session.armedTimers == [], "a timer after the rejection: \(session.armedTimers)")
    let opened = transport.openedCount
    // And none came in ten backoff periods.
    try await Task.sleep(for: .seconds(1))
    #expect(transport.openedCount == opened, "opened \(transport.openedCount - opened) more after the rejection")
    #expect(session.armedTimers == [])
}

extension Duration {
    /// How long a status wait against a real server may take before it fails: real backoffs,
    /// restarts and sanitizer-slowed builds take real time; still well inside the suites' limits.
    static let realServer = Duration.seconds(40)
}

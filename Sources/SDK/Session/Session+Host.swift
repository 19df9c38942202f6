public import ConnectionPolicy

extension Session {
    /// Asks for a connection and returns once connected. Throws ``SessionError`` with
    /// ``SessionError/Code/notWanted`` when the policy does not connect now (Auto mode in the
    /// background), and ``SessionError/Code/disconnected`` (with the reason) when the session
    /// gives up instead: rejected credentials, retries exhausted, the app backgrounded, `disconnect()`.
    /// While a retry is pending it keeps waiting; if the calling task is cancelled it throws
    /// `CancellationError` (the connection attempt itself goes on: cancel means "stop waiting"),
    /// also when `run()` has not started yet. After ``shutdown()`` it throws
    /// ``SessionError/Code/sessionEnded`` at once.
    public func connect() async throws {
        try refuseIfEnded("connect()")
        ensureStarted()
        next.trigger = .appConnect
        perform(runtime.control.connectRequested())
        let isIdle: Bool = if case .idle = link { true } else { false }
        try await awaitConnected(isIdle: isIdle)
    }

    /// Disconnects; nothing reconnects by itself until the app calls ``connect()``. Returns once
    /// the session has let go of the socket (the close frame is on its way).
    public func disconnect() {
        guard !hasEnded else { return }
        ensureStarted()
        perform(runtime.control.disconnectRequested())
    }

    /// Sends a ping and returns when the server's pong arrives. In Manual mode in the
    /// background each ping also buys another full watchdog window. Throws
    /// ``SessionError/Code/notConnected`` when there is no connection, and
    /// ``SessionError/Code/sessionEnded`` after ``shutdown()``.
    public func ping() async throws {
        try refuseIfEnded("ping()")
        ensureStarted()
        perform(runtime.control.pingRequested())
        guard case .open = link else {
            throw SessionError(.notConnected, "ping needs a connection (status: \(status))")
        }
        _ = try await requestPing(kind: .appPing)
    }

    /// Tells the session the app's lifecycle state: from SwiftUI's `scenePhase`, or a custom
    /// lifecycle. A repeated state changes nothing.
    public func setAppState(_ state: AppLifecycleState) {
        guard !hasEnded else { return }
        ensureStarted()
        guard state != lifecycle else { return }
        let wasForeground = lifecycle.isForeground
        if state.isForeground, !wasForeground {
            next.trigger = .foreground
            retryStoreIfAwaited()
        }
        perform(runtime.control.setLifecycle(state))
        if state.isForeground != wasForeground {
            armOutboxDeadline()
            // Back in the foreground the control asks for the probe (``probeConnection()``).
            if !state.isForeground { stopHeartbeat() }
        }
    }

    /// Reports the app's lifecycle state without waiting, for synchronous callers (SwiftUI's
    /// `onChange(of: scenePhase)`, a UIKit delegate method): reports are applied in the order
    /// they were made, once `run()` runs, as ``setAppState(_:)`` applies them. (Separate tasks
    /// each calling `setAppState` would not be ordered.)
    public nonisolated func reportAppState(_ state: AppLifecycleState) {
        inputSink.yield(.runtime(.appStateReported(state)))
    }

    /// Tells the session whether the network is reachable: unreachable stops retries, reachable
    /// tries again at once.
    public func setNetworkReachable(_ reachable: Bool) {
        guard !hasEnded else { return }
        ensureStarted()
        guard reachable != runtime.control.isNetworkReachable else { return }
        if reachable { next.trigger = .networkRestored }
        perform(runtime.control.setNetworkReachable(reachable))
    }

    /// Tells the session the device's conditions (the path, Low Power Mode, the thermal state,
    /// reachability): the policy hears of each change, and the heartbeat follows the liveness
    /// decided for them (``AppSettings/powerSaving``). A repeated value changes nothing.
    public func setDeviceConditions(_ conditions: DeviceConditions) {
        guard !hasEnded else { return }
        ensureStarted()
        if conditions.isNetworkReachable, !runtime.control.isNetworkReachable { next.trigger = .networkRestored }
        perform(runtime.control.setConditions(conditions))
    }

    /// The device's conditions as the session knows them.
    public var deviceConditions: DeviceConditions { runtime.control.conditions }

    /// How the session checks that the connection is alive now: the settings' heartbeat, as the
    /// power saving rules and the policy adapt it to the conditions.
    public var liveness: Liveness { runtime.control.liveness }

    /// Tells the session the credentials changed (the token provider has a new token): after
    /// rejected credentials, it tries again at once. With a connection open, the session asks
    /// the token provider and hands the token to the protocol: one that takes credentials in
    /// band (Supabase Realtime's `access_token`) sends it without reconnecting; the others use it
    /// on the next connection.
    public func credentialsChanged() {
        guard !hasEnded else { return }
        ensureStarted()
        if case .open = link {
            fetchCredentialsForOpenConnection()
            return
        }
        guard status.reason?.code == .credentialsRejected else { return }
        next.trigger = .appConnect
        perform(runtime.control.connectRequested("credentials changed after a rejection"))
    }

    /// Asks the token provider, and hands its answer to the open connection's protocol (see
    /// ``credentialsChanged()``; a protocol whose credentials expire while it is open asks too).
    func fetchCredentialsForOpenConnection() {
        guard case .open(let connection, _) = link else { return }
        let (sink, settings, attempt) = (inputSink, settings, connection.attempt.id)
        spawn { sink.yield(.credentialsFetched(attempt: attempt, token: try? await settings.token())) }
    }

    /// Replaces the connection policy at run time. The new policy starts from the facts (the
    /// lifecycle state, whether a connection is open, the network); the old policy's timers are
    /// cancelled, and an attempt in flight is abandoned for the new policy to decide.
    public func replacePolicy(_ newPolicy: some SessionPolicy) {
        guard !hasEnded else { return }
        ensureStarted()
        next.trigger = .policyReplaced
        perform(runtime.control.replacePolicy(newPolicy))
    }
}

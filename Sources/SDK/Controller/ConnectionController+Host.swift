public import ConnectionPolicy

extension ConnectionController {
    /// Asks for a connection and returns once connected. Throws ``SessionError`` with
    /// ``SessionError/Code/notWanted`` when the policy does not connect now (Auto mode in the
    /// background), ``SessionError/Code/disconnected`` (with the reason) when the controller gives
    /// up instead (a fatal error, the app backgrounded, `disconnect()`), `CancellationError` when
    /// the calling task is cancelled (the attempt goes on), and
    /// ``SessionError/Code/sessionEnded`` after ``shutdown()``. While a retry is pending it keeps
    /// waiting.
    public func connect() async throws {
        guard !hasEnded else { throw SessionError(.sessionEnded, "connect() after the controller ended") }
        perform(runtime.control.connectRequested())
        try await awaitConnected(isIdle: runtime.control.phase == .idle)
    }

    /// Disconnects; nothing reconnects by itself until the app calls ``connect()``. Returns once
    /// the controller has let go of the connection (the client's `close` is under way).
    public func disconnect() {
        guard !hasEnded else { return }
        perform(runtime.control.disconnectRequested())
    }

    /// Tells the policy the app pinged (in Manual mode in the background each ping buys another
    /// full watchdog window), then runs the app's ping on the client, if it gave one, up to the
    /// ping timeout. Throws ``SessionError/Code/notConnected`` without a connection,
    /// ``SessionError/Code/timedOut`` when the client's ping takes longer, and
    /// ``SessionError/Code/sessionEnded`` after ``shutdown()``.
    public func ping() async throws {
        guard !hasEnded else { throw SessionError(.sessionEnded, "ping() after the controller ended") }
        perform(runtime.control.pingRequested())
        guard case .open = runtime.control.phase else { throw SessionError(.notConnected, "ping needs a connection (status: \(status))") }
        guard let pinger else { return }
        let finished = OneShot()
        let (result, timedOut) = await race({
            defer { finished.fire() }
            try await pinger()
        }, cancelledBy: Self.deadline(pingTimeout, on: clock, unless: finished))
        if timedOut { throw SessionError(.timedOut, "the client's ping took longer than \(pingTimeout)") }
        try result?.get()
    }

    /// Tells the controller the app's lifecycle state (from SwiftUI's `scenePhase`, or a custom
    /// lifecycle). A repeated state changes nothing.
    public func setAppState(_ state: AppLifecycleState) {
        guard !hasEnded else { return }
        perform(runtime.control.setLifecycle(state))
    }

    /// Reports the app's lifecycle state without waiting, for synchronous callers: reports are
    /// applied in the order they were made, once ``run()`` runs.
    public nonisolated func reportAppState(_ state: AppLifecycleState) {
        inputSink.yield(.runtime(.appStateReported(state)))
    }

    /// Tells the controller whether the network is reachable: unreachable stops retries,
    /// reachable tries again at once.
    public func setNetworkReachable(_ reachable: Bool) {
        guard !hasEnded else { return }
        perform(runtime.control.setNetworkReachable(reachable))
    }

    /// Tells the controller the device's conditions (the path, Low Power Mode, the thermal
    /// state, reachability): the policy hears of each change, and the liveness is decided again.
    public func setDeviceConditions(_ conditions: DeviceConditions) {
        guard !hasEnded else { return }
        perform(runtime.control.setConditions(conditions))
    }

    /// How the app's client should check that its connection is alive, as the policy decides
    /// it under the conditions now. The controller has no heartbeat of its own (the client
    /// keeps itself alive): a policy that wants one says so in
    /// `SessionPolicy.liveness(proposed:in:)`, and the app applies it to its client.
    public var liveness: Liveness { runtime.control.liveness }

    /// The controller runs no heartbeat: ``liveness`` is there for the app to read.
    func livenessChanged(_ liveness: Liveness) {}

    /// The app's client checks itself (the controller's base liveness asks for no probe; a
    /// policy that asks for one has the app read ``liveness`` and probe its client).
    func probeConnection() {}

    /// Replaces the policy at run time: the old one's timers are cancelled, an open in flight
    /// is abandoned, an open connection is kept, and the new policy decides from the facts.
    public func replacePolicy(_ newPolicy: some SessionPolicy) {
        guard !hasEnded else { return }
        perform(runtime.control.replacePolicy(newPolicy))
    }

    /// A signal that fires after `limit` on `clock`, unless `done` fired first.
    nonisolated static func deadline(_ limit: Duration, on clock: SessionClock, unless done: OneShot) -> OneShot {
        let signal = OneShot()
        let deadline = clock.deadline(after: limit)
        Task {
            _ = await race({ try await clock.sleep(until: deadline) }, cancelledBy: done)
            if !done.hasFired { signal.fire() }
        }
        return signal
    }
}

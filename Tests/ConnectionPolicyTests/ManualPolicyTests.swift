import ConnectionPolicy
import Testing

@Suite("ManualPolicy")
struct ManualPolicyTests {
    func makeHarness(timeout: Duration = .seconds(30), lifecycle: AppLifecycleState = .active) -> PolicyHarness<ManualPolicy> {
        PolicyHarness(
            ManualPolicy(.init(backgroundTimeout: timeout, backoff: Backoff(initial: .seconds(1), jitter: 0)), jitter: .fixed(0)),
            context: PolicyContext(lifecycle: lifecycle)
        )
    }

    func connected() -> PolicyHarness<ManualPolicy> {
        var harness = makeHarness()
        harness.send { $0.connectRequested() }
        harness.completeOpen()
        return harness
    }

    // Seed 004, Manual mode.
    @Test("launch opens nothing until connect()")
    func launchWaitsForConnect() {
        var harness = makeHarness()
        #expect(harness.log.isEmpty)
        #expect(harness.send { $0.lifecycleChanged(to: .background) } == [])
        #expect(harness.send { $0.lifecycleChanged(to: .active) } == [])
        #expect(harness.send { $0.connectRequested() } == [.openConnection])
    }

    @Test("background arms a 30 s watchdog; when it fires, disconnect")
    func watchdog() {
        var harness = connected()
        harness.send { $0.lifecycleChanged(to: .background) }
        #expect(harness.armed[.watchdog]?.delay == .seconds(30))
        #expect(harness.socket == .open)
        #expect(harness.fire(.watchdog) == [.closeConnection(.watchdogExpired)])
        #expect(harness.armed.isEmpty)
    }

    @Test("each ping() in the background re-arms the watchdog for a full window")
    func pingExtends() {
        var harness = connected()
        harness.send { $0.lifecycleChanged(to: .background) }
        let first = harness.armed[.watchdog]!.timer
        let actions = harness.send { $0.pingRequested() }
        let second = harness.armed[.watchdog]!.timer
        #expect(actions == [.cancelTimer(first), .armTimer(second, after: .seconds(30))])
        #expect(first != second)
        // The first arming's fire is stale.
        #expect(harness.send { $0.timerFired(first) } == [])
        #expect(harness.socket == .open)
        #expect(harness.fire(.watchdog) == [.closeConnection(.watchdogExpired)])
    }

    @Test("ping() in the foreground arms nothing")
    func pingInForeground() {
        var harness = connected()
        #expect(harness.send { $0.pingRequested() } == [])
    }

    @Test("foreground cancels the watchdog")
    func foregroundCancels() {
        var harness = connected()
        harness.send { $0.lifecycleChanged(to: .background) }
        let timer = harness.armed[.watchdog]!.timer
        #expect(harness.send { $0.lifecycleChanged(to: .active) } == [.cancelTimer(timer)])
        #expect(harness.armed.isEmpty)
    }

    @Test("after the watchdog, foreground stays disconnected until connect()")
    func watchdogIsSticky() {
        var harness = connected()
        harness.send { $0.lifecycleChanged(to: .background) }
        harness.fire(.watchdog)
        #expect(harness.send { $0.lifecycleChanged(to: .active) } == [])
        #expect(harness.send { $0.networkReachabilityChanged(isReachable: true) } == [])
        #expect(harness.send { $0.pingRequested() } == [])
        #expect(harness.send { $0.connectRequested() } == [.openConnection])
    }

    @Test("the watchdog length comes from the configuration")
    func configurableTimeout() {
        var harness = makeHarness(timeout: .seconds(3))
        harness.send { $0.connectRequested() }
        harness.completeOpen()
        harness.send { $0.lifecycleChanged(to: .background) }
        #expect(harness.armed[.watchdog]?.delay == .seconds(3))
    }

    @Test("disconnect() closes, cancels the watchdog and stays closed")
    func disconnect() {
        var harness = connected()
        harness.send { $0.lifecycleChanged(to: .background) }
        let timer = harness.armed[.watchdog]!.timer
        #expect(harness.send { $0.disconnectRequested() } == [.cancelTimer(timer), .closeConnection(.appRequested)])
        #expect(harness.send { $0.lifecycleChanged(to: .active) } == [])
    }

    @Test("in the foreground a lost connection reconnects by itself")
    func foregroundReconnect() {
        var harness = connected()
        #expect(harness.lose(.lost(after: .seconds(60))) == [.openConnection])
        harness.lose(.attemptFailed())
        #expect(harness.armed[.reconnect]?.delay == .seconds(1))
    }

    @Test("in the background a lost connection is not retried, and only connect() reconnects")
    func backgroundLoss() {
        var harness = connected()
        harness.send { $0.lifecycleChanged(to: .background) }
        let watchdog = harness.armed[.watchdog]!.timer
        #expect(harness.lose(.lost(after: .seconds(60))) == [.cancelTimer(watchdog), .closeConnection(.networkLost)])
        #expect(harness.armed.isEmpty)
        #expect(harness.send { $0.lifecycleChanged(to: .active) } == [])
        #expect(harness.send { $0.connectRequested() } == [.openConnection])
    }

    @Test("backgrounded during a reconnect: cancelled, no retry, no watchdog")
    func backgroundDuringReconnect() {
        var harness = connected()
        harness.lose(.lost(after: .milliseconds(1)))
        let retry = harness.armed[.reconnect]!.timer
        #expect(harness.send { $0.lifecycleChanged(to: .background) } == [.cancelTimer(retry), .closeConnection(.appBackgrounded)])
        #expect(harness.armed.isEmpty)
        #expect(harness.send { $0.lifecycleChanged(to: .active) } == [])
    }

    @Test("connect() in the background opens and starts the watchdog window")
    func connectInBackground() {
        var harness = makeHarness(lifecycle: .background)
        let actions = harness.send { $0.connectRequested() }
        #expect(actions.first == .openConnection)
        #expect(harness.armed[.watchdog]?.delay == .seconds(30))
    }

    @Test("100 rapid flips never ask for two sockets and leave no watchdog in the foreground")
    func rapidFlips() {
        var harness = connected()
        for _ in 0..<100 {
            harness.send { $0.lifecycleChanged(to: .background) }
            harness.send { $0.pingRequested() }
            harness.send { $0.lifecycleChanged(to: .active) }
        }
        #expect(harness.doubleSocketRequests == 0)
        #expect(harness.armed.isEmpty)
        #expect(harness.socket == .open)
    }

    @Test("rejected credentials: no retry until connect()")
    func fatal() {
        var harness = makeHarness()
        harness.send { $0.connectRequested() }
        #expect(harness.lose(.attemptFailed(.credentialsRejected, disposition: .doNotRetry)) == [.closeConnection(.credentialsRejected)])
        #expect(harness.armed.isEmpty)
        #expect(harness.send { $0.connectRequested() } == [.openConnection])
    }

    @Test("replacing a policy on an open connection in the background arms the watchdog")
    func startConnectedInBackground() {
        let harness = PolicyHarness(ManualPolicy(jitter: .fixed(0)), context: PolicyContext(lifecycle: .background, isConnected: true))
        #expect(harness.armed[.watchdog]?.delay == .seconds(30))
    }
}

import ConnectionPolicy
import Testing

@Suite("AutoPolicy")
struct AutoPolicyTests {
    static let backoff = Backoff(initial: .seconds(1), multiplier: 2, maximum: .seconds(8), jitter: 0.5, maxAttempts: 4)

    func makeHarness(grace: Duration = .zero, lifecycle: AppLifecycleState = .active) -> PolicyHarness<AutoPolicy> {
        PolicyHarness(
            AutoPolicy(.init(backgroundGrace: grace, backoff: Self.backoff), jitter: .fixed(0.5)),
            context: PolicyContext(lifecycle: lifecycle)
        )
    }

    // Seed 004, Auto mode: launch connects by itself; foreground connected; background
    // disconnected immediately; back to foreground reconnects.
    @Test("launch in the foreground opens a connection by itself")
    func launchConnects() {
        let harness = makeHarness()
        #expect(harness.log == [.openConnection])
    }

    @Test("launch in the background opens nothing")
    func launchInBackground() {
        let harness = makeHarness(lifecycle: .background)
        #expect(harness.log.isEmpty)
    }

    @Test("background closes at once and arms no timer; foreground reconnects")
    func backgroundThenForeground() {
        var harness = makeHarness()
        harness.completeOpen()
        #expect(harness.send { $0.lifecycleChanged(to: .background) } == [.closeConnection(.appBackgrounded)])
        #expect(harness.armed.isEmpty)
        #expect(harness.send { $0.lifecycleChanged(to: .active) } == [.openConnection])
    }

    @Test("inactive is foreground: no change")
    func inactiveKeepsConnection() {
        var harness = makeHarness()
        harness.completeOpen()
        #expect(harness.send { $0.lifecycleChanged(to: .inactive) } == [])
        #expect(harness.send { $0.lifecycleChanged(to: .active) } == [])
    }

    @Test("a grace period keeps the connection open in the background until it fires")
    func grace() {
        var harness = makeHarness(grace: .seconds(5))
        harness.completeOpen()
        let actions = harness.send { $0.lifecycleChanged(to: .background) }
        guard case .armTimer(let timer, let delay)? = actions.first, actions.count == 1 else {
            Issue.record("expected one armTimer, got \(actions)")
            return
        }
        #expect(timer.id == .backgroundGrace)
        #expect(delay == .seconds(5))
        #expect(harness.fire(.backgroundGrace) == [.closeConnection(.appBackgrounded)])
    }

    @Test("foreground within the grace period cancels it and keeps the connection")
    func graceCancelledByForeground() {
        var harness = makeHarness(grace: .seconds(5))
        harness.completeOpen()
        harness.send { $0.lifecycleChanged(to: .background) }
        let timer = harness.armed[.backgroundGrace]!.timer
        #expect(harness.send { $0.lifecycleChanged(to: .active) } == [.cancelTimer(timer)])
        // A stale fire of the cancelled grace timer changes nothing.
        #expect(harness.send { $0.timerFired(timer) } == [])
        #expect(harness.socket == .open)
    }

    @Test("a loss during the grace period ends it: no retry, no timer in the background")
    func lossDuringGrace() {
        var harness = makeHarness(grace: .seconds(5))
        harness.completeOpen()
        harness.send { $0.lifecycleChanged(to: .background) }
        let timer = harness.armed[.backgroundGrace]!.timer
        #expect(harness.lose(.lost(after: .seconds(60))) == [.cancelTimer(timer), .closeConnection(.networkLost)])
        #expect(harness.armed.isEmpty)
        #expect(harness.send { $0.lifecycleChanged(to: .active) } == [.openConnection])
    }

    // Seed 000 edge cases.
    @Test("backgrounded during a reconnect: the retry is cancelled and not run")
    func backgroundDuringReconnect() {
        var harness = makeHarness()
        harness.completeOpen()
        harness.lose(.lost(after: .seconds(1)))  // short-lived: a retry with backoff
        let retry = harness.armed[.reconnect]!.timer
        #expect(harness.send { $0.lifecycleChanged(to: .background) } == [.cancelTimer(retry), .closeConnection(.appBackgrounded)])
        #expect(harness.armed.isEmpty)
        #expect(harness.send { $0.timerFired(retry) } == [])
    }

    @Test("backgrounded while a reconnect attempt is in flight: it is cancelled")
    func backgroundDuringReconnectAttempt() {
        var harness = makeHarness()
        harness.completeOpen()
        #expect(harness.lose(.lost(after: .seconds(60))) == [.openConnection])
        #expect(harness.send { $0.lifecycleChanged(to: .background) } == [.closeConnection(.appBackgrounded)])
    }

    @Test("100 rapid background/foreground flips converge and never ask for two sockets")
    func rapidFlips() {
        var harness = makeHarness()
        harness.completeOpen()
        for index in 0..<100 {
            harness.send { $0.lifecycleChanged(to: .background) }
            harness.send { $0.lifecycleChanged(to: .active) }
            if index.isMultiple(of: 3) { harness.completeOpen() }
        }
        #expect(harness.doubleSocketRequests == 0)
        #expect(harness.socket != .closed)
        #expect(harness.armed.isEmpty)
        harness.send { $0.lifecycleChanged(to: .background) }
        #expect(harness.socket == .closed)
    }

    @Test("disconnect() then foreground stays disconnected until connect()")
    func disconnectIsSticky() {
        var harness = makeHarness()
        harness.completeOpen()
        #expect(harness.send { $0.disconnectRequested() } == [.closeConnection(.appRequested)])
        #expect(harness.send { $0.lifecycleChanged(to: .background) } == [])
        #expect(harness.send { $0.lifecycleChanged(to: .active) } == [])
        #expect(harness.send { $0.networkReachabilityChanged(isReachable: true) } == [])
        #expect(harness.send { $0.connectRequested() } == [.openConnection])
    }

    @Test("already disconnected when foregrounding: safe, one open")
    func alreadyDisconnectedOnForeground() {
        var harness = makeHarness(lifecycle: .background)
        #expect(harness.send { $0.lifecycleChanged(to: .active) } == [.openConnection])
        #expect(harness.send { $0.lifecycleChanged(to: .active) } == [])
        #expect(harness.send { $0.lifecycleChanged(to: .inactive) } == [])
        #expect(harness.doubleSocketRequests == 0)
    }

    @Test("disconnect() while idle still reports the app's reason")
    func disconnectWhileIdle() {
        var harness = makeHarness(lifecycle: .background)
        #expect(harness.send { $0.disconnectRequested() } == [.closeConnection(.appRequested)])
    }

    @Test("connect() in the background opens nothing (Auto never connects in the background)")
    func connectInBackground() {
        var harness = makeHarness()
        harness.send { $0.disconnectRequested() }
        harness.send { $0.lifecycleChanged(to: .background) }
        #expect(harness.send { $0.connectRequested() } == [])
        #expect(harness.send { $0.lifecycleChanged(to: .active) } == [.openConnection])
    }

    // Reconnects in the foreground.
    @Test("losing a working connection retries at once; failed attempts back off exactly")
    func reconnectBackoff() {
        var harness = makeHarness()
        harness.completeOpen()
        #expect(harness.lose(.lost(after: .seconds(30))) == [.openConnection])
        // jitter 0.5 of 0.5 fraction: each delay is 75 % of the nominal one.
        var delays: [Duration] = []
        for _ in 0..<3 {
            harness.lose(.attemptFailed())
            delays.append(harness.armed[.reconnect]!.delay)
            #expect(harness.fire(.reconnect) == [.openConnection])
        }
        #expect(delays == [.milliseconds(750), .milliseconds(1500), .milliseconds(3000)])
        // The fourth failure in a row reaches maxAttempts = 4.
        let actions = harness.lose(.attemptFailed())
        guard case .closeConnection(let reason)? = actions.first else {
            Issue.record("expected a close, got \(actions)")
            return
        }
        #expect(reason.code == .retriesExhausted)
        #expect(harness.armed.isEmpty)
    }

    @Test("a connection that drops right after opening counts as a failure: no reconnect storm")
    func noStormOnFlappingServer() {
        var harness = makeHarness()
        harness.completeOpen()
        var immediateRetries = 0
        for _ in 0..<3 {
            let actions = harness.lose(.lost(after: .milliseconds(10)))
            if actions == [.openConnection] { immediateRetries += 1 } else { harness.fire(.reconnect) }
            harness.completeOpen()
        }
        #expect(immediateRetries == 0)
    }

    @Test("a connection open for exactly stableAfter (5 s) counted as working: retried at once; one nanosecond less: a failure, backed off", arguments: [true, false])
    func stableAfterEdge(reachesIt: Bool) {
        var harness = makeHarness()
        harness.completeOpen()
        harness.lose(.attemptFailed())
        harness.fire(.reconnect)
        harness.completeOpen()  // one failure before this connection
        let uptime = reachesIt ? Duration.seconds(5) : .seconds(5) - .nanoseconds(1)
        let actions = harness.lose(.lost(after: uptime))
        if reachesIt {
            #expect(actions == [.openConnection], "worked: the failures start over and the retry is immediate")
        } else {
            #expect(!actions.contains(.openConnection) && harness.armed[.reconnect]?.delay == .milliseconds(1500), "the second failure in a row: \(actions), \(harness.armed)")
        }
    }

    @Test("after giving up, a return to the foreground starts afresh")
    func retriesExhaustedThenForeground() {
        var harness = makeHarness()
        for _ in 0..<3 {
            harness.lose(.attemptFailed())
            harness.fire(.reconnect)
        }
        harness.lose(.attemptFailed())
        #expect(harness.socket == .closed)
        #expect(harness.send { $0.lifecycleChanged(to: .background) } == [])
        #expect(harness.send { $0.lifecycleChanged(to: .active) } == [.openConnection])
    }

    @Test("rejected credentials: no retry, not even on foreground, until connect()")
    func fatal() {
        var harness = makeHarness()
        #expect(harness.lose(.attemptFailed(.credentialsRejected, disposition: .doNotRetry)) == [.closeConnection(.credentialsRejected)])
        #expect(harness.armed.isEmpty)
        harness.send { $0.lifecycleChanged(to: .background) }
        #expect(harness.send { $0.lifecycleChanged(to: .active) } == [])
        #expect(harness.send { $0.connectRequested() } == [.openConnection])
    }

    @Test("a retry-after from the server is honoured")
    func retryAfter() {
        var harness = makeHarness()
        harness.completeOpen()
        let actions = harness.lose(.lost(.serverClosed("busy"), disposition: .retryAfter(.seconds(42)), after: .seconds(60)))
        #expect(actions.count == 1)
        #expect(harness.armed[.reconnect]?.delay == .seconds(42))
    }

    @Test("unreachable network pauses retries; reachable again tries at once")
    func reachability() {
        var harness = makeHarness()
        harness.lose(.attemptFailed())
        let retry = harness.armed[.reconnect]!.timer
        #expect(harness.send { $0.networkReachabilityChanged(isReachable: false) } == [.cancelTimer(retry)])
        #expect(harness.armed.isEmpty)
        #expect(harness.send { $0.networkReachabilityChanged(isReachable: true) } == [.openConnection])
    }

    @Test("a loss while unreachable waits for the network instead of arming a timer")
    func lossWhileUnreachable() {
        var harness = makeHarness()
        harness.completeOpen()
        harness.send { $0.networkReachabilityChanged(isReachable: false) }
        #expect(harness.lose(.lost(after: .seconds(60))) == [])
        #expect(harness.armed.isEmpty)
        #expect(harness.send { $0.networkReachabilityChanged(isReachable: true) } == [.openConnection])
    }

    @Test("a start on a connection that is already open keeps it (policy replacement)")
    func startConnected() {
        let harness = PolicyHarness(AutoPolicy(jitter: .fixed(0)), context: PolicyContext(lifecycle: .active, isConnected: true))
        #expect(harness.log == [])
        let background = PolicyHarness(AutoPolicy(jitter: .fixed(0)), context: PolicyContext(lifecycle: .background, isConnected: true))
        #expect(background.log == [.closeConnection(.appBackgrounded)])
    }
}

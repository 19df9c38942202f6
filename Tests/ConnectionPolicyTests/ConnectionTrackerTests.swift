import ConnectionPolicy
import Testing

/// The tracker's answer to a changed path, table by table.
@Suite("ConnectionTracker: the path changes")
struct ConnectionTrackerTests {
    static let backoff = Backoff(initial: .seconds(4), multiplier: 2, maximum: .seconds(60), jitter: 0)

    /// A tracker on `interface` whose first attempt failed: a retry waits on its backoff timer.
    func waitingToRetry(on interface: NetworkInterface) -> (ConnectionTracker, PolicyTimer) {
        var tracker = ConnectionTracker(backoff: Self.backoff, jitter: .fixed(0))
        tracker.adopt(PolicyContext(lifecycle: .active, conditions: DeviceConditions(interface: interface)))
        #expect(tracker.reconcile(wanted: true, reason: .appBackgrounded) == [.openConnection])
        let actions = tracker.lost(ConnectionLoss(reason: DisconnectReason(.networkLost)), retriesAllowed: true)
        guard case .armTimer(let timer, let delay)? = actions.first else {
            Issue.record("expected a retry timer, got \(actions)")
            return (tracker, PolicyTimer(id: .reconnect, generation: 0))
        }
        #expect(delay == .seconds(4))
        return (tracker, timer)
    }

    @Test("Wi-Fi → cellular while a retry waits: the retry goes now, not at the end of its backoff")
    func changedInterfaceRetriesNow() {
        var (tracker, timer) = waitingToRetry(on: .wifi)
        #expect(tracker.conditionsChanged(to: DeviceConditions(isExpensive: true, interface: .cellular)) == [.cancelTimer(timer), .openConnection])
        #expect(tracker.interface == .cellular)
    }

    @Test(
        "no retry now: the same interface, the first interface after none, an unreachable network, or nothing waiting",
        arguments: [
            (NetworkInterface.wifi, DeviceConditions(isConstrained: true, interface: .wifi)),
            (.unknown, DeviceConditions(interface: .wifi)),
            (.wifi, DeviceConditions(isNetworkReachable: false, interface: .cellular)),
        ]
    )
    func noRetryNow(start: NetworkInterface, next: DeviceConditions) {
        var (tracker, _) = waitingToRetry(on: start)
        #expect(tracker.conditionsChanged(to: next) == [])
        #expect(tracker.interface == next.interface)
    }

    @Test("connected, a path change asks for nothing (the session probes the socket)")
    func connected() {
        var tracker = ConnectionTracker(backoff: Self.backoff, jitter: .fixed(0))
        tracker.adopt(PolicyContext(lifecycle: .active, isConnected: true, conditions: DeviceConditions(interface: .wifi)))
        #expect(tracker.conditionsChanged(to: DeviceConditions(interface: .cellular)) == [])
    }

    @Test("over cellular a server that keeps failing is asked half as often from the third failure: 4 s, 8 s, then 32 s (not 16 s); on Wi-Fi 4, 8, 16")
    func expensiveBackoff() {
        for (conditions, third) in [(DeviceConditions(isExpensive: true, interface: .cellular), Duration.seconds(32)), (DeviceConditions(interface: .wifi), .seconds(16))] {
            var tracker = ConnectionTracker(backoff: Self.backoff, jitter: .fixed(0))
            tracker.adopt(PolicyContext(lifecycle: .active, conditions: conditions))
            _ = tracker.reconcile(wanted: true, reason: .appBackgrounded)
            var delays: [Duration] = []
            for _ in 0..<3 {
                let actions = tracker.lost(ConnectionLoss(reason: DisconnectReason(.networkLost)), retriesAllowed: true)
                guard case .armTimer(let timer, let delay)? = actions.first else {
                    Issue.record("expected a retry timer, got \(actions)")
                    return
                }
                delays.append(delay)
                #expect(tracker.timerFired(timer) == [.openConnection])
            }
            #expect(delays == [.seconds(4), .seconds(8), third], "\(conditions)")
        }
    }
}

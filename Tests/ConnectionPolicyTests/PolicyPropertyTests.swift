import ConnectionPolicy
import PropertyBased
import Testing

/// Random event sequences through both policies, with the invariants of DESIGN.md checked after
/// every event (a failing sequence is shrunk to a short one and printed with its seed).
@Suite("Policy properties")
struct PolicyPropertyTests {
    static let events = Gen.int(in: 0...14).array(of: 1...120)

    @Test("Auto: never two sockets; nothing in the background past the grace; disconnect() is sticky; no timer but the grace in the background")
    func autoInvariants() async {
        await propertyCheck(count: 400, input: Self.events, Gen.int(in: 0...1)) { events, graceChoice in
            let grace: Duration = graceChoice == 0 ? .zero : .seconds(5)
            var model = Model(PolicyHarness(AutoPolicy(.init(backgroundGrace: grace, backoff: Backoff(maxAttempts: 5)), jitter: .seeded(7))))
            for event in events {
                model.play(event)
                let harness = model.harness
                #expect(harness.doubleSocketRequests == 0, "two sockets after \(model.trace)")
                if model.lifecycle == .background {
                    #expect(Set(harness.armed.keys).isSubset(of: [.backgroundGrace]), "a timer in the background after \(model.trace)")
                    if harness.armed[.backgroundGrace] == nil {
                        #expect(harness.socket == .closed, "connected in the background past the grace after \(model.trace)")
                    }
                }
                if model.disconnectedByApp {
                    #expect(harness.socket == .closed, "reconnected after disconnect() without connect(): \(model.trace)")
                    #expect(harness.armed.isEmpty, "a timer after disconnect(): \(model.trace)")
                }
            }
        }
    }

    @Test("Manual: never two sockets; opens only after connect(); in the background only the watchdog; after the watchdog, closed until connect()")
    func manualInvariants() async {
        await propertyCheck(count: 400, input: Self.events) { events in
            var model = Model(PolicyHarness(ManualPolicy(.init(backoff: Backoff(maxAttempts: 5)), jitter: .seeded(7))))
            for event in events {
                let opensBefore = model.harness.opens
                model.play(event)
                let harness = model.harness
                #expect(harness.doubleSocketRequests == 0, "two sockets after \(model.trace)")
                if harness.opens > opensBefore {
                    #expect(model.connectCalledSinceStop, "opened without connect() after \(model.trace)")
                }
                if model.lifecycle == .background {
                    #expect(Set(harness.armed.keys).isSubset(of: [.watchdog]), "a timer other than the watchdog in the background: \(model.trace)")
                }
                if model.lastStop == .watchdogExpired || model.lastStop == .appRequested {
                    #expect(harness.socket == .closed, "open after \(model.lastStop!) without connect(): \(model.trace)")
                }
            }
        }
    }
}

extension PolicyPropertyTests {
    /// Liveness, which the invariants above cannot see (a policy that never opens satisfies all
    /// of them): from whatever state a random sequence left, an app in the foreground, with a
    /// network, that calls `connect()` is connected after the opens it asks for complete and its
    /// timers fire — within a bounded number of steps.
    static func endsConnected<Policy: SessionPolicy>(_ policy: Policy, after events: [Int]) -> (Bool, [String]) {
        var model = Model(PolicyHarness(policy))
        for event in events { model.play(event) }
        model.play(1)   // active
        model.play(14)  // reachable
        model.play(3)   // connect()
        for _ in 0..<20 {
            switch model.harness.socket {
            case .open: return (true, model.trace)
            case .opening: model.play(6)
            case .closed:
                guard !model.harness.armed.isEmpty else { return (false, model.trace) }
                model.play(11)
            }
        }
        return (model.harness.socket == .open, model.trace)
    }

    @Test("Auto and Manual: from any state, foreground + network + connect() ends connected (liveness)")
    func liveness() async {
        await propertyCheck(count: 300, input: Self.events) { events in
            let auto = Self.endsConnected(AutoPolicy(.init(backgroundGrace: .seconds(5), backoff: Backoff(maxAttempts: 5)), jitter: .seeded(7)), after: events)
            #expect(auto.0, "Auto not connected after \(auto.1)")
            let manual = Self.endsConnected(ManualPolicy(.init(backoff: Backoff(maxAttempts: 5)), jitter: .seeded(7)), after: events)
            #expect(manual.0, "Manual not connected after \(manual.1)")
        }
    }
}

/// Plays numbered events against a policy and its socket model, tracking what the app did.
struct Model<Policy: SessionPolicy> {
    var harness: PolicyHarness<Policy>
    var lifecycle: AppLifecycleState = .active
    var disconnectedByApp = false
    var connectCalledSinceStop = false
    var lastStop: DisconnectReason.Code?
    var everArmed: [PolicyTimer] = []
    var trace: [String] = []

    init(_ harness: PolicyHarness<Policy>) {
        self.harness = harness
    }

    mutating func play(_ event: Int) {
        let before = harness.log.count
        switch event {
        case 0:
            trace.append("background")
            lifecycle = .background
            harness.send { $0.lifecycleChanged(to: .background) }
        case 1:
            trace.append("active")
            lifecycle = .active
            harness.send { $0.lifecycleChanged(to: .active) }
        case 2:
            trace.append("inactive")
            lifecycle = .inactive
            harness.send { $0.lifecycleChanged(to: .inactive) }
        case 3:
            trace.append("connect")
            disconnectedByApp = false
            connectCalledSinceStop = true
            lastStop = nil
            harness.send { $0.connectRequested() }
        case 4:
            trace.append("disconnect")
            disconnectedByApp = true
            connectCalledSinceStop = false
            lastStop = .appRequested
            harness.send { $0.disconnectRequested() }
        case 5:
            trace.append("ping")
            harness.send { $0.pingRequested() }
        case 6, 7:
            guard harness.socket == .opening else { return }
            trace.append("opened")
            harness.completeOpen()
        case 8:
            guard harness.socket != .closed else { return }
            trace.append("lost (working)")
            harness.lose(.lost(after: .seconds(60)))
        case 9:
            guard harness.socket != .closed else { return }
            trace.append("attempt failed")
            harness.lose(harness.socket == .opening ? .attemptFailed() : .lost(after: .milliseconds(5)))
        case 10:
            guard harness.socket != .closed else { return }
            trace.append("rejected")
            harness.lose(.attemptFailed(.credentialsRejected, disposition: .doNotRetry))
        case 11:
            guard let id = harness.armed.keys.sorted(by: { $0.name < $1.name }).first else { return }
            trace.append("fire \(id)")
            harness.fire(id)
        case 12:
            guard let stale = everArmed.first(where: { timer in harness.armed[timer.id]?.timer != timer }) else { return }
            trace.append("stale fire \(stale)")
            let actions = harness.send { $0.timerFired(stale) }
            #expect(actions.isEmpty, "a stale timer fire acted: \(trace)")
        case 13:
            trace.append("unreachable")
            harness.send { $0.networkReachabilityChanged(isReachable: false) }
        default:
            trace.append("reachable")
            harness.send { $0.networkReachabilityChanged(isReachable: true) }
        }
        for action in harness.log[before...] {
            switch action {
            case .armTimer(let timer, _):
                everArmed.append(timer)
            case .closeConnection(let reason):
                if reason.code == .watchdogExpired || (lifecycle == .background && Policy.self == ManualPolicy.self) {
                    lastStop = reason.code
                    connectCalledSinceStop = false
                }
                if reason.code == .credentialsRejected || reason.code == .retriesExhausted {
                    connectCalledSinceStop = false
                }
            default:
                break
            }
        }
    }
}

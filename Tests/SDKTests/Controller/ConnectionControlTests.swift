import ConnectionPolicy
@testable import SDK
import Testing

/// The controller's state machine alone, table by table: inputs in, effects out (log lines left
/// aside), no task and no clock.
@Suite("ConnectionControl (the controller's state machine)")
struct ConnectionControlTests {
    enum Step: CustomStringConvertible {
        case start, lifecycle(AppLifecycleState), network(Bool), connect, disconnect, ping
        case opened(UInt64), lost(UInt64, DisconnectReason), fired(ControlTimer), replace(any SessionPolicy), openUnowned, returnUnowned

        var description: String {
            switch self {
            case .start: "start"
            case .lifecycle(let state): "app \(state)"
            case .network(let reachable): "network \(reachable)"
            case .connect: "connect"
            case .disconnect: "disconnect"
            case .ping: "ping"
            case .opened(let attempt): "opened \(attempt)"
            case .lost(let attempt, let reason): "lost \(attempt) \(reason)"
            case .fired(let timer): "fired \(timer)"
            case .replace(let policy): "replace with \(policy.name)"
            case .openUnowned: "open unowned"
            case .returnUnowned: "return unowned"
            }
        }
    }

    static let backoff = Backoff(initial: .seconds(1), multiplier: 2, maximum: .seconds(8), jitter: 0)
    static let auto = AutoPolicy(.init(backoff: backoff), jitter: .fixed(0))
    static let manual = ManualPolicy(.init(backgroundTimeout: .seconds(30), backoff: backoff), jitter: .fixed(0))

    /// Runs `steps`; returns each step's effects without log lines and liveness decisions
    /// (``ConnectionControlConditionsTests`` has those).
    func run(_ policy: any SessionPolicy, _ steps: [Step], lifecycle: AppLifecycleState = .active) -> (ConnectionControl, [[ControlEffect]]) {
        var control = ConnectionControl(policy: policy, lifecycle: lifecycle, conditions: .unconstrained, connectTimeout: .seconds(10))
        var all: [[ControlEffect]] = []
        for step in steps {
            let effects: [ControlEffect] = switch step {
            case .start: control.start()
            case .lifecycle(let state): control.setLifecycle(state)
            case .network(let reachable): control.setNetworkReachable(reachable)
            case .connect: control.connectRequested()
            case .disconnect: control.disconnectRequested()
            case .ping: control.pingRequested()
            case .opened(let attempt): control.opened(attempt)
            case .lost(let attempt, let reason): control.lost(attempt, reason: reason, disposition: .retry, uptime: nil)
            case .fired(let timer): control.timerFired(timer)
            case .replace(let policy): control.replacePolicy(policy)
            case .openUnowned: control.openUnowned()?.effects ?? []
            case .returnUnowned: control.returnUnowned()
            }
            all.append(effects.filter { switch $0 { case .log, .liveness: false; default: true } })
        }
        return (control, all)
    }

    static let opening1: [ControlEffect] = [.open(attempt: 1), .arm(.connectTimeout, after: .seconds(10)), .status(.connecting)]

    @Test("Auto: launch opens; open → connected; background tears down with the reason; foreground opens attempt 2")
    func autoTable() {
        let (control, effects) = run(Self.auto, [.start, .opened(1), .lifecycle(.background), .lifecycle(.active)])
        #expect(effects[0] == Self.opening1)
        #expect(effects[1] == [.cancel(.connectTimeout), .status(.connected)])
        #expect(effects[2] == [.teardown(attempt: 1, cause: .policyClosed(.appBackgrounded)), .policyClosed(.appBackgrounded), .status(.disconnected(.appBackgrounded))])
        #expect(effects[3] == [.open(attempt: 2), .arm(.connectTimeout, after: .seconds(10)), .status(.connecting)])
        #expect(control.phase == .opening(attempt: 2, .policy))
    }

    /// An app's policy that asks for a connection on every event, whatever the state.
    struct GreedyPolicy: SessionPolicy {
        var name: String { "greedy" }
        mutating func start(in context: PolicyContext) -> [PolicyAction] { [.openConnection] }
        mutating func lifecycleChanged(to state: AppLifecycleState) -> [PolicyAction] { [.openConnection] }
        mutating func connectRequested() -> [PolicyAction] { [.openConnection] }
        mutating func disconnectRequested() -> [PolicyAction] { [.openConnection] }
        mutating func pingRequested() -> [PolicyAction] { [.openConnection] }
        mutating func connectionOpened() -> [PolicyAction] { [.openConnection] }
        mutating func connectionLost(_ loss: ConnectionLoss) -> [PolicyAction] { [.openConnection] }
        mutating func timerFired(_ timer: PolicyTimer) -> [PolicyAction] { [.openConnection] }
        mutating func networkReachabilityChanged(isReachable: Bool) -> [PolicyAction] { [.openConnection] }
    }

    @Test("never two: a policy that asks to open while an attempt is opening or open gets no second one")
    func neverTwoForAnAppPolicy() {
        let (control, effects) = run(GreedyPolicy(), [.start, .connect, .lifecycle(.background), .opened(1), .connect, .ping, .network(true)])
        let opens = effects.flatMap { $0 }.filter { if case .open = $0 { true } else { false } }
        #expect(opens == [.open(attempt: 1)])
        #expect(control.phase == .open(attempt: 1, .policy))
    }

    @Test("Manual: nothing at launch; the watchdog is armed in the background, a ping re-arms it, its fire closes")
    func manualTable() {
        let (control, effects) = run(Self.manual, [.start, .connect, .opened(1), .lifecycle(.background), .ping, .fired(.policy(.watchdog))])
        #expect(effects[0] == [])
        #expect(effects[1] == Self.opening1)
        #expect(effects[3].contains { if case .arm(.policy(.watchdog), after: .seconds(30)) = $0 { true } else { false } })
        #expect(effects[4].contains { if case .arm(.policy(.watchdog), after: .seconds(30)) = $0 { true } else { false } })
        #expect(effects[5] == [.teardown(attempt: 1, cause: .policyClosed(.watchdogExpired)), .policyClosed(.watchdogExpired), .status(.disconnected(.watchdogExpired))])
        #expect(control.phase == .idle)
        #expect(control.armed.isEmpty)
    }

    @Test("a loss is reported once: reconnecting and the retry timer; a second report of the same attempt changes nothing")
    func lostTwice() {
        let (control, effects) = run(Self.auto, [.start, .opened(1), .lost(1, .networkLost), .lost(1, .networkLost)])
        #expect(effects[2] == [.status(.reconnecting(.networkLost)), .arm(.policy(.reconnect), after: .seconds(1))])
        #expect(effects[3] == [])
        #expect(control.isRetryPending)
    }

    @Test("an attempt that opens after it was torn down is torn down again at once, and counts for nothing")
    func openedAfterTeardown() {
        let (control, effects) = run(Self.auto, [.start, .lifecycle(.background), .opened(1)])
        #expect(effects[1].first == .teardown(attempt: 1, cause: .policyClosed(.appBackgrounded)))
        #expect(effects[2] == [.teardown(attempt: 1, cause: .returned)])
        #expect(control.phase == .idle)
    }

    @Test("the connect timeout asks the performer to give the attempt up; its loss then schedules a retry")
    func connectTimeout() {
        let (control, effects) = run(Self.auto, [.start, .fired(.connectTimeout), .lost(1, .error("connecting took longer than 10.0 seconds"))])
        #expect(effects[1] == [.connectTimedOut(attempt: 1, reason: .error("connecting took longer than 10.0 seconds"))])
        #expect(effects[2] == [.status(.reconnecting(.error("connecting took longer than 10.0 seconds"))), .arm(.policy(.reconnect), after: .seconds(1))])
        #expect(control.phase == .idle)
    }

    @Test("never two: the policy asking again while an attempt is opening opens nothing")
    func neverTwo() {
        let (_, effects) = run(Self.manual, [.start, .connect, .connect])
        #expect(effects[1] == Self.opening1)
        #expect(!effects[2].contains { if case .open = $0 { true } else { false } })
    }

    @Test("network down stops the retry; back up opens at once")
    func network() {
        let (_, effects) = run(Self.auto, [.start, .opened(1), .network(false), .lost(1, .networkLost), .network(true)])
        #expect(!effects[3].contains { if case .arm(.policy(.reconnect), _) = $0 { true } else { false } })
        #expect(effects[4].contains(.open(attempt: 2)))
    }

    @Test("replacing the policy abandons an attempt opening, keeps an open one")
    func replace() {
        let (_, opening) = run(Self.manual, [.start, .connect, .replace(Self.manual)])
        #expect(opening[2].first == .teardown(attempt: 1, cause: .policyReplaced))
        #expect(opening[2].last == .status(.disconnected(.policyReplaced)))
        let (control, open) = run(Self.manual, [.start, .connect, .opened(1), .replace(Self.auto)])
        #expect(!open[3].contains { if case .teardown = $0 { true } else { false } })
        #expect(control.phase == .open(attempt: 1, .policy))
    }

    @Test("an attempt opened without the policy: the policy never hears of it until it asks, then takes it over")
    func unowned() {
        let (control, effects) = run(Self.manual, [.start, .openUnowned, .opened(1), .connect], lifecycle: .background)
        #expect(effects[1] == Self.opening1)
        #expect(effects[2] == [.cancel(.connectTimeout), .status(.connected)])
        #expect(control.phase == .open(attempt: 1, .policy))
        let (returned, more) = run(Self.manual, [.start, .openUnowned, .opened(1), .returnUnowned], lifecycle: .background)
        #expect(more[3] == [.teardown(attempt: 1, cause: .returned)])
        #expect(returned.phase == .idle)
    }
}

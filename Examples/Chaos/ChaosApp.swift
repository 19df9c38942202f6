import SDK
import SDKTesting

/// The app's side of a chaos run, the same against every server: its lifecycle and host calls,
/// and the invariants that must hold after every step and at the end.
struct ChaosApp {
    enum Step: Hashable, Sendable, CustomStringConvertible {
        case background, foreground, connect, disconnect, ping
        /// The OS takes back the app's background time (iOS's budget ran out).
        case backgroundTimeExpires

        var description: String {
            switch self {
            case .backgroundTimeExpires: "the OS takes back the background time"
            case .background: "background"
            case .foreground: "foreground"
            case .connect: "connect()"
            case .disconnect: "disconnect()"
            case .ping: "ping()"
            }
        }
    }

    let session: Session
    let lifecycle: ManualLifecycleSource
    let transport: CountingTransport
    /// The session's background time (a fake: the invariants read it).
    let backgroundTime: TestBackgroundTime
    let auto: Bool
    /// The protocol's own timers, which Manual mode keeps in the background with its socket.
    let backgroundWireTimers: Set<String>
    private(set) var isBackground = false
    private(set) var isDisconnectedByApp = false
    /// Host calls started and not awaited: each must complete by the end.
    private(set) var calls: [Task<Void, Never>] = []

    init(
        session: Session, lifecycle: ManualLifecycleSource, transport: CountingTransport, backgroundTime: TestBackgroundTime, auto: Bool,
        backgroundWireTimers: Set<String> = []
    ) {
        self.session = session
        self.lifecycle = lifecycle
        self.transport = transport
        self.backgroundTime = backgroundTime
        self.auto = auto
        self.backgroundWireTimers = backgroundWireTimers
    }

    mutating func perform(_ step: Step) async {
        let session = self.session
        switch step {
        case .background:
            isBackground = true
            await lifecycle.send(.background)
        case .foreground:
            isBackground = false
            await lifecycle.send(.active)
        case .connect:
            isDisconnectedByApp = false
            calls.append(Task { _ = try? await session.connect() })
        case .disconnect:
            isDisconnectedByApp = true
            await session.disconnect()
        case .ping:
            calls.append(Task { _ = try? await session.ping() })
        case .backgroundTimeExpires:
            backgroundTime.expireAll()
        }
    }

    /// A host call to complete by the end.
    mutating func started(_ call: Task<Void, Never>) {
        calls.append(call)
    }

    /// Never two sockets; in the background no recurring timer (Manual: only the watchdog, the
    /// deadlines of what the app asked for, and the protocol's watch on the server's beat); nothing
    /// connected or open while Auto is in the background or after `disconnect()`.
    func violationsAfterStep(_ at: String) async -> [String] {
        var found: [String] = []
        if transport.maxOpen > 1 { found.append("two sockets at once \(at)") }
        // Background time: held exactly when needed, never two, never ended twice, never in
        // the foreground (the lifecycle change has been handled when `send` returns).
        if let problem = await session.backgroundTimeProblem { found.append("\(problem) \(at)") }
        if backgroundTime.heldCount > 1 { found.append("\(backgroundTime.heldCount) background-time grants held \(at)") }
        if backgroundTime.doubleEndCount > 0 { found.append("background time ended twice \(at)") }
        if !isBackground, backgroundTime.heldCount != 0 { found.append("background time held in the foreground \(at)") }
        let timers = Set(session.armedTimers.map(\.name))
        if isBackground {
            // An allowed name ending in `*` allows every timer it starts (a protocol's per-request timers).
            let allowed: Set<String> = auto ? [] : Set(["watchdog", "request", "connect-timeout"]).union(backgroundWireTimers)
            let isAllowed = { (name: String) in allowed.contains(name) || allowed.contains { $0.hasSuffix("*") && name.hasPrefix($0.dropLast()) } }
            if !timers.allSatisfy(isAllowed) { found.append("timers \(timers.sorted()) in the background \(at)") }
        }
        if (auto && isBackground) || isDisconnectedByApp {
            let status = session.status
            if status == .connected || status == .connecting { found.append("status \(status) \(at) (should not be connected)") }
            if !(await transport.waitForOpen(0, timeout: .seconds(2))) { found.append("a socket stays open \(at)") }
        }
        return found
    }

    /// After shutdown: every host call completed, no socket left, never two at once.
    func violationsAtEnd() async -> [String] {
        var found: [String] = []
        for call in calls {
            let finished = await succeeds(within: .seconds(3)) {
                await call.value
                return true
            }
            if !finished { found.append("a host call never completed") }
        }
        if !(await transport.waitForOpen(0, timeout: .seconds(2))) { found.append("a socket was left open after shutdown") }
        if backgroundTime.heldCount != 0 || backgroundTime.begunCount != backgroundTime.endedCount {
            found.append("background time after shutdown: held \(backgroundTime.heldCount), begun \(backgroundTime.begunCount), ended \(backgroundTime.endedCount)")
        }
        if transport.maxOpen > 1 { found.append("two sockets at once (max \(transport.maxOpen))") }
        return found
    }

    /// Connects again once the faults are cleared (a rejection still in flight may land after a
    /// connect(): the app's part is then to call connect() again).
    func reconnects(within timeout: Duration) async -> Bool {
        let session = self.session
        await lifecycle.send(.active)
        for _ in 0..<3 {
            if await succeeds(within: timeout, { (try? await session.connect()) != nil }) { return true }
        }
        return false
    }
}

import ConnectionPolicy

/// One step of a chaos schedule against a real third-party server (`chaos --protocol`): the
/// app's calls and lifecycle, and process-level faults on the server.
enum PeerChaosStep: Hashable, Sendable, CustomStringConvertible {
    /// The app's lifecycle or a host call.
    case app(ChaosApp.Step)
    case subscribe(Int), unsubscribe(Int), publish(Int)
    /// SIGKILL: the server is gone until `.start` (or the end of the schedule).
    case kill
    case start
    /// SIGSTOP: the process holds its sockets and answers nothing until `.resume` (SIGCONT).
    case stop
    case resume
    /// SIGTERM and a fresh process on the same port.
    case restart

    var description: String {
        switch self {
        case .app(let step): step.description
        case .subscribe(let channel): "subscribe(c\(channel))"
        case .unsubscribe(let channel): "unsubscribe(c\(channel))"
        case .publish(let channel): "publish(c\(channel))"
        case .kill: "server killed (SIGKILL)"
        case .start: "server started"
        case .stop: "server stopped (SIGSTOP)"
        case .resume: "server continued (SIGCONT)"
        case .restart: "server restarted"
        }
    }

    /// A schedule of `count` steps from `seed` (the same seed, the same schedule).
    static func schedule(seed: UInt64, count: Int) -> [PeerChaosStep] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            let channel = Int(random.next() % 3)
            switch random.next() % 21 {
            case 0, 1, 2: return .app(.background)
            case 3, 4, 5: return .app(.foreground)
            case 6, 7: return .app(.connect)
            case 8: return .app(.disconnect)
            case 9: return .app(.ping)
            case 10, 11: return .subscribe(channel)
            case 12: return .unsubscribe(channel)
            case 13, 14: return .publish(channel)
            case 15: return .kill
            case 16: return .start
            case 17: return .stop
            case 18: return .resume
            case 19: return .restart
            default: return .app(.backgroundTimeExpires)
            }
        }
    }
}

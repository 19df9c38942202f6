import ConnectionPolicy
/// One step of a chaos schedule.
enum ChaosStep: Hashable, Sendable, CustomStringConvertible {
    /// The app's lifecycle or a host call.
    case app(ChaosApp.Step)
    case subscribe(Int), unsubscribe(Int), publish(Int)
    case serverPublish(Int)
    case drop, refuse(Bool), freeze(Bool), delay(Int), restart, rejectCredentials(Bool), close(UInt16)

    var description: String {
        switch self {
        case .app(let step): step.description
        case .subscribe(let channel): "subscribe(c\(channel))"
        case .unsubscribe(let channel): "unsubscribe(c\(channel))"
        case .publish(let channel): "publish(c\(channel))"
        case .serverPublish(let channel): "server publishes on c\(channel)"
        case .drop: "server drops every connection"
        case .refuse(let on): "server refuses connections: \(on)"
        case .freeze(let on): "server frozen: \(on)"
        case .delay(let milliseconds): "server delays frames \(milliseconds) ms"
        case .restart: "server restarts"
        case .rejectCredentials(let on): "server rejects credentials: \(on)"
        case .close(let code): "server closes with \(code)"
        }
    }

    /// A schedule of `count` steps from `seed` (SplitMix64: the same seed, the same schedule).
    static func schedule(seed: UInt64, count: Int) -> [ChaosStep] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            let channel = Int(random.next() % 3)
            switch random.next() % 23 {
            case 0, 1, 2: return .app(.background)
            case 3, 4, 5: return .app(.foreground)
            case 6, 7: return .app(.connect)
            case 8: return .app(.disconnect)
            case 9: return .app(.ping)
            case 10, 11: return .subscribe(channel)
            case 12: return .unsubscribe(channel)
            case 13, 14: return .publish(channel)
            case 15, 16: return .serverPublish(channel)
            case 17: return .drop
            case 18: return .refuse(random.next() % 2 == 0)
            case 19: return .freeze(random.next() % 2 == 0)
            case 20: return [.delay(Int(random.next() % 40)), .restart, .rejectCredentials(random.next() % 2 == 0)][Int(random.next() % 3)]
            case 21: return [.close(4000), .close(4429), .close(1001)][Int(random.next() % 3)]
            default: return .app(.backgroundTimeExpires)
            }
        }
    }
}

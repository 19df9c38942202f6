import PeerServers
import SDK

/// The server a kill-mode run speaks to, and how the app and the observer talk to it: Tether's
/// reference server (the default); `--protocol mqtt`, mosquitto with a persistent session; or
/// `--protocol supabase`, the Supabase peer with private channels replayed by timestamp.
enum KillTarget: String, Sendable {
    case tether
    case mqtt
    case supabase

    /// The protocol, for a client whose broker session (MQTT) is keyed by `clientID`.
    func serverProtocol(clientID: String) -> ServerProtocol {
        switch self {
        case .tether: .tether
        case .mqtt: .mqtt(clientID: clientID, username: MQTTBroker.username, keepAlive: .seconds(5))
        case .supabase: .supabaseRealtime(apiKey: "anon", replyTimeout: .seconds(1))
        }
    }

    var path: String { self == .supabase ? "/realtime/v1" : "/" }

    var token: String {
        switch self {
        case .tether: "chaos"
        case .mqtt: MQTTBroker.password
        case .supabase: "user-token"
        }
    }

    /// What the app subscribes to for the runner's channel `name`.
    func topic(_ name: String) -> Topic {
        switch self {
        case .tether, .mqtt: Topic(name)
        case .supabase: .supabase(name, config: SupabaseChannelConfig(isPrivate: true, replayLimit: 25, broadcastOrigin: .databaseOnly))
        }
    }

    /// Indicates that the app publishes too. On the Supabase peer only what the database sends
    /// is replayed (`realtime.send`): the runner publishes, over HTTP; a broadcast of the app's
    /// would have no key and no replay (its kill is `mayHaveBeenApplied`, tested in the unit suites).
    var appPublishes: Bool { self != .supabase }

    /// The Supabase peer's `n` that stands for the runner's last message.
    static let finalNumber = 999_999

    /// The text of a message the app or the observer received; `nil` for what is not one of the
    /// runner's or the app's messages (Supabase's presence events).
    func text(_ data: JSONValue) -> String? {
        switch self {
        case .tether:
            if case .string(let text) = data { return text }
            return "\(data)"
        case .mqtt:
            if case .string(let text)? = data["payload"] { return text }
            return "\(data)"
        case .supabase:
            guard data["event"]?.stringValue == "broadcast", let n = data["payload"]?["payload"]?["n"]?.integerValue else { return nil }
            return n == Self.finalNumber ? "final" : "S-\(n)"
        }
    }
}

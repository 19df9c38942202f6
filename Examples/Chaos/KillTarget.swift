import PeerServers
import SDK

/// The server a kill-mode run speaks to, and how the app and the observer talk to it: Tether's
/// reference server (the default) or `--protocol mqtt`, mosquitto with a persistent session.
enum KillTarget: String, Sendable {
    case tether
    case mqtt

    /// The protocol, for a client whose broker session (MQTT) is keyed by `clientID`.
    func serverProtocol(clientID: String) -> ServerProtocol {
        switch self {
        case .tether: .tether
        case .mqtt: .mqtt(clientID: clientID, username: MQTTBroker.username, keepAlive: .seconds(5))
        }
    }

    var token: String {
        switch self {
        case .tether: "chaos"
        case .mqtt: MQTTBroker.password
        }
    }

    /// What the app and the observer publish: the text itself (MQTT: the payload's JSON).
    func data(_ text: String) -> JSONValue { .string(text) }

    /// The text of a message the app or the observer received.
    static func text(_ data: JSONValue) -> String {
        switch data {
        case .string(let text): text
        case .object(let fields) where fields["payload"] != nil: text(fields["payload"] ?? .null)
        default: "\(data)"
        }
    }
}

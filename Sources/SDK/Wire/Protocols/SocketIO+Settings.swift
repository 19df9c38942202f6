/// What Socket.IO settings can be wrong: the app's, refused by `AppSettings.Builder.build()`,
/// and the server's, announced in its open packet.
extension SocketIO {
    /// Event names Socket.IO reserves: an app's handler never receives them.
    static let reservedEvents: Set<String> = ["connect", "connect_error", "disconnect", "disconnecting", "newListener", "removeListener"]
    /// Query items Engine.IO's handshake uses itself.
    static let reservedQueryItems: Set<String> = ["EIO", "transport", "sid", "t"]

    /// Empty, reserved or shared event names, an empty room key, a query item that is empty or
    /// one of Engine.IO's own: each would make a session that connects and then does nothing.
    package var settingsProblem: String? {
        let named = [("join", events.join), ("leave", events.leave), ("publish", events.publish), ("message", events.message)]
        for (role, name) in named {
            if name.isEmpty { return "the Socket.IO \(role) event name is empty" }
            if Self.reservedEvents.contains(name) { return "the Socket.IO \(role) event '\(name)' is reserved by Socket.IO" }
        }
        for (index, (role, name)) in named.enumerated() {
            if let other = named[..<index].first(where: { $0.1 == name }) {
                return "the Socket.IO \(other.0) and \(role) events are both '\(name)'"
            }
        }
        if events.channelKey.isEmpty { return "the Socket.IO channelKey (the payload member naming the room) is empty" }
        if let item = credentialsQueryItem {
            if item.isEmpty { return "credentialsInQuery names an empty query item" }
            if Self.reservedQueryItems.contains(item) { return "credentialsInQuery '\(item)' is a query item Engine.IO uses itself" }
        }
        return nil
    }

    /// The server announced a heartbeat that cannot work (python-engineio rounds a
    /// `ping_interval` under 1 s down to 0): what the app is told, naming the setting.
    static func heartbeatSettingProblem(interval: Int64, timeout: Int64) -> String {
        "socket.io: the server announced pingInterval \(interval) ms and pingTimeout \(timeout) ms; both must be more than 0 "
            + "(python-engineio rounds a ping_interval under 1 s down to 0): fix the server's ping settings"
    }
}

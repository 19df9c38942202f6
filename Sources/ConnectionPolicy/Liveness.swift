/// How a session checks that its connection is alive: the foreground heartbeat (a ping every
/// `interval`, a pong within `timeout`) and the probe of an open connection when the app
/// returns to the foreground. Decided by the session's control from the settings, the power
/// saving rules and the device's conditions; a policy may change it
/// (``SessionPolicy/liveness(proposed:in:)``). The heartbeat never runs in the background.
public struct Liveness: Hashable, Sendable, CustomStringConvertible {
    /// The foreground heartbeat; nil: none.
    public var heartbeat: Heartbeat?
    /// Indicates that an open connection is probed (one ping, a short timeout) right away when
    /// the app returns to the foreground, rather than trusted until the next heartbeat.
    public var probesOnReturn: Bool
    /// How many times longer than configured the protocol's own keep-alive may be (Phoenix's
    /// heartbeat, MQTT's keep-alive; at least 1), each within what its servers tolerate: Phoenix
    /// to at most 50 s (Phoenix closes a socket silent for 60 s), MQTT to at most 120 s (a
    /// broker ends a client silent for 1.5 keep-alives; a carrier's NAT forgets an idle mapping
    /// within minutes). MQTT's is negotiated when it connects: a change applies from the next
    /// connection.
    public var keepAliveStretch: Int
    /// Indicates that a heartbeat ping is skipped when the traffic already proved the connection
    /// alive: the server was heard from within the interval, and the client sent something within
    /// two intervals. The next check is one interval after the server was last heard from, so the
    /// bound (a dead connection found within interval + timeout of its last sign of life) holds.
    public var skipsHeartbeatWhenAlive: Bool

    /// A decision: the heartbeat (`nil`: none), whether to probe an open socket when the app
    /// returns, how many times to stretch the protocol's keep-alive, and whether to skip a
    /// heartbeat the traffic made needless.
    public init(heartbeat: Heartbeat?, probesOnReturn: Bool = true, keepAliveStretch: Int = 1, skipsHeartbeatWhenAlive: Bool = false) {
        self.heartbeat = heartbeat
        self.probesOnReturn = probesOnReturn
        self.keepAliveStretch = max(1, keepAliveStretch)
        self.skipsHeartbeatWhenAlive = skipsHeartbeatWhenAlive
    }

    /// A ping every `interval`; a pong not back within `timeout` ends the connection as
    /// half-open. The longest a dead connection goes unnoticed is `interval + timeout`.
    public struct Heartbeat: Hashable, Sendable {
        /// How long the connection may be silent before the session pings.
        public var interval: Duration
        /// How long a ping waits for its answer before the connection counts as dead.
        public var timeout: Duration

        /// A heartbeat every `interval`, each ping answered within `timeout`.
        public init(interval: Duration, timeout: Duration) {
            self.interval = interval
            self.timeout = timeout
        }

        /// The longest a dead connection goes unnoticed in the foreground.
        public var bound: Duration { interval + timeout }
    }

    public var description: String {
        let beat = heartbeat.map { "heartbeat every \($0.interval), timeout \($0.timeout)" } ?? "no heartbeat"
        return beat + (probesOnReturn ? ", probe on return" : "") + (keepAliveStretch > 1 ? ", protocol keep-alive ×\(keepAliveStretch)" : "")
            + (skipsHeartbeatWhenAlive && heartbeat != nil ? ", skipped when traffic proves the connection alive" : "")
    }
}

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

    public init(heartbeat: Heartbeat?, probesOnReturn: Bool = true) {
        self.heartbeat = heartbeat
        self.probesOnReturn = probesOnReturn
    }

    /// A ping every `interval`; a pong not back within `timeout` ends the connection as
    /// half-open. The longest a dead connection goes unnoticed is `interval + timeout`.
    public struct Heartbeat: Hashable, Sendable {
        public var interval: Duration
        public var timeout: Duration

        public init(interval: Duration, timeout: Duration) {
            self.interval = interval
            self.timeout = timeout
        }

        /// The longest a dead connection goes unnoticed in the foreground.
        public var bound: Duration { interval + timeout }
    }

    public var description: String {
        let beat = heartbeat.map { "heartbeat every \($0.interval), timeout \($0.timeout)" } ?? "no heartbeat"
        return beat + (probesOnReturn ? ", probe on return" : "")
    }
}

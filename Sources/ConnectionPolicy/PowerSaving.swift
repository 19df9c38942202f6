/// What a session does to save battery and data when the device asks it to
/// (``DeviceConditions/asksToSave``): the rules, as a value in the settings. ``standard`` is
/// the default; ``off`` keeps every interval as the settings give it, whatever the conditions.
public struct PowerSaving: Hashable, Sendable {
    /// Indicates that the rules apply at all.
    public var isEnabled: Bool
    /// On a constrained or expensive path, in Low Power Mode or on a hot device, the foreground
    /// heartbeat's interval, and the protocol's own keep-alive (``Liveness/keepAliveStretch``), are
    /// multiplied by this (at least 1)...
    public var heartbeatStretch: Int
    /// ...but stretched no further than this (an interval the app set longer is kept as set):
    /// many proxies and load balancers close a connection idle for 60 s.
    public var longestStretchedHeartbeat: Duration
    /// On an expensive path, from this many failed attempts in a row, each wait before the next
    /// attempt is multiplied by ``expensiveBackoffStretch`` (at least 1): a server that keeps
    /// refusing is not asked as often over cellular.
    public var expensiveBackoffAfterFailures: Int
    /// How many times longer the backoff gets on an expensive path, once that many attempts in a
    /// row failed.
    public var expensiveBackoffStretch: Int

    /// Rules of your own; ``standard`` and ``off`` are the two most apps want.
    public init(
        isEnabled: Bool = true, heartbeatStretch: Int = 2, longestStretchedHeartbeat: Duration = .seconds(55), expensiveBackoffAfterFailures: Int = 3,
        expensiveBackoffStretch: Int = 2
    ) {
        self.isEnabled = isEnabled
        self.heartbeatStretch = max(1, heartbeatStretch)
        self.longestStretchedHeartbeat = longestStretchedHeartbeat
        self.expensiveBackoffAfterFailures = max(1, expensiveBackoffAfterFailures)
        self.expensiveBackoffStretch = max(1, expensiveBackoffStretch)
    }

    /// The rules as the SDK ships them: the heartbeat at most doubled, to at most 55 s, while
    /// the device asks to save; on an expensive path the backoff doubled from the third failed
    /// attempt in a row.
    public static let standard = PowerSaving()
    /// No rule: the settings' intervals in every condition.
    public static let off = PowerSaving(isEnabled: false)

    /// The wait before the next attempt after `failures` failed in a row, from the backoff's
    /// `delay`, under `conditions`.
    public func retryDelay(_ delay: Duration, failures: Int, conditions: DeviceConditions) -> Duration {
        guard isEnabled, conditions.isExpensive, failures >= expensiveBackoffAfterFailures else { return delay }
        return delay * expensiveBackoffStretch
    }

    /// The liveness these rules give under `conditions`, from the settings' `base`.
    /// Enabled, the rules also skip a heartbeat the traffic made needless
    /// (``Liveness/skipsHeartbeatWhenAlive``), in every condition: the liveness bound is kept.
    public func liveness(base: Liveness, conditions: DeviceConditions) -> Liveness {
        guard isEnabled else { return base }
        var liveness = base
        liveness.skipsHeartbeatWhenAlive = true
        guard conditions.asksToSave else { return liveness }
        liveness.keepAliveStretch = max(base.keepAliveStretch, heartbeatStretch)
        if var heartbeat = base.heartbeat {
            let stretched = heartbeat.interval * heartbeatStretch
            heartbeat.interval = max(heartbeat.interval, min(stretched, longestStretchedHeartbeat))
            liveness.heartbeat = heartbeat
        }
        return liveness
    }
}

/// The bounds that keep one misbehaving client from costing the server without limit (see
/// `docs/PROTOCOL.md`, "Server limits"). Every one is a `realtime-server` flag.
public struct ServerLimits: Hashable, Sendable {
    /// From the TCP accept to the end of the upgrade request (a slowloris upgrade is cut off).
    public var upgradeTimeout: Duration = .seconds(10)
    /// From the upgrade to an accepted `auth` (close 4408 after it).
    public var authenticationTimeout: Duration = .seconds(10)
    /// An authenticated connection that sends nothing for this long is closed (4000, "idle").
    /// Clients keep connections alive with `ping` (Tether's heartbeat: every 25 s).
    public var idleTimeout: Duration = .seconds(120)
    /// Bytes queued for one connection that its reader has not taken: past this the reader is
    /// too slow, and the connection is closed (4008); the client catches up by sequence.
    public var maxQueuedBytes: Int = 8 << 20
    /// How long a publish's idempotency key is remembered.
    public var deduplicationWindow: Duration = .seconds(120)

    public init() {}
}

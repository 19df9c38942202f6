/// The faults the reference server can inject, for tests and for app developers trying their
/// app against a bad network. Set at start (flags) and changed while it runs (the in-process
/// handle, or `GET /admin/...` from another process).
public struct ServerFaults: Hashable, Sendable, CustomStringConvertible {
    /// Decline every WebSocket upgrade (HTTP 503).
    public var refuseConnections = false
    /// Accept bytes and answer nothing (a half-open server).
    public var freeze = false
    /// Reject every credential (error `unauthorized`, close code 4001).
    public var rejectCredentials = false
    /// Delay every frame the server sends by this long (an emulated latency, not a throttle).
    public var frameDelay: Duration = .zero

    public init(refuseConnections: Bool = false, freeze: Bool = false, rejectCredentials: Bool = false, frameDelay: Duration = .zero) {
        self.refuseConnections = refuseConnections
        self.freeze = freeze
        self.rejectCredentials = rejectCredentials
        self.frameDelay = frameDelay
    }

    public var description: String {
        "refuse=\(refuseConnections) freeze=\(freeze) rejectCredentials=\(rejectCredentials) delay=\(frameDelay)"
    }
}

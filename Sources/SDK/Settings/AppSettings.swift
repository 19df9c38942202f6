public import ConnectionPolicy
public import Foundation

/// Supplies the token for each connection attempt, so an expired token is refreshed, never
/// reused. Return `nil` for a server that needs no credentials.
public typealias TokenProvider = @Sendable () async throws -> Secret?

/// How a session is configured, once, at init. Build one with ``AppSettings/Builder``:
///
/// ```swift
/// let settings = try AppSettings.Builder()
///     .serverURL("wss://realtime.example.com/")
///     .tokenProvider { try await auth.freshToken() }   // asked for every attempt
///     .autoEstablishSocketConnection(false)     // Manual mode
///     .backgroundTimeout(.seconds(30))
///     .build()
/// ```
public struct AppSettings: Sendable, CustomStringConvertible {
    /// Which connection policy the session runs.
    ///
    /// These three cases are all there will be: a new built-in policy would come as a `custom` name.
    @frozen
    public enum Mode: Hashable, Sendable, CustomStringConvertible {
        /// Connected in the foreground, disconnected in the background (the default).
        case auto
        /// Connected between `connect()` and `disconnect()`, with a background watchdog.
        case manual
        /// A policy the app supplied, by its name.
        case custom(String)

        public var description: String {
            switch self {
            case .auto: "auto"
            case .manual: "manual"
            case .custom(let name): "custom(\(name))"
            }
        }
    }

    /// The WebSocket endpoint.
    public let serverURL: URL
    /// The connection policy.
    public let mode: Mode
    /// Manual mode: how long the connection stays open in the background without a `ping()`.
    public let backgroundTimeout: Duration
    /// Auto mode: how long an open connection may stay open in the background.
    public let backgroundGrace: Duration
    /// The backoff between failed reconnect attempts.
    public let reconnectBackoff: Backoff
    /// How long a connection must stay open before its loss is retried at once.
    public let stableConnectionAfter: Duration
    /// How long opening and authenticating a connection may take.
    public let connectTimeout: Duration
    /// How long a request (publish, subscribe, ping) may wait for its reply.
    public let requestTimeout: Duration
    /// How many publishes may wait in the outbox while disconnected.
    public let outboxLimit: Int
    /// How many bytes of data (as JSON text) the publishes waiting in the outbox may hold together.
    public let outboxByteLimit: Int
    /// How long a publish may wait in the outbox before it fails with `timedOut`.
    public let outboxTimeout: Duration
    /// How a replay runs its steps.
    public let replayMode: ReplayMode
    /// How many times a replayed step is tried before it fails for good.
    public let replayAttempts: Int
    /// Indicates that `ws://` to a host other than loopback is allowed.
    public let allowsInsecureTransport: Bool
    /// Where backoff jitter comes from.
    public let jitter: JitterSource
    /// The codec for Tether's own protocol (not public: Tether's messages are its own).
    package let codec: any WireCodec
    /// The protocol the server speaks (default ``ServerProtocol/tether``).
    public let serverProtocol: ServerProtocol

    /// The protocol the session speaks, as the core drives it: made once, at build (made at
    /// each use, it was a boxed value allocated and freed twice per subscription of a recovery).
    package let wireProtocol: any WireProtocolDescription

    /// The protocol `serverProtocol` names, speaking with `codec` (Tether's own).
    static func wireProtocol(_ serverProtocol: ServerProtocol, codec: any WireCodec) -> any WireProtocolDescription {
        switch serverProtocol.kind {
        case .tether(let handshake): TetherProtocol(codec: codec, handshake: handshake)
        case .adapter(let adapter): adapter
        }
    }
    /// Where the session's log goes.
    public let logger: SessionLogger
    /// The heartbeat in the foreground: a ping every `interval`, a pong expected within
    /// `timeout`; `nil` turns it off.
    public let heartbeat: (interval: Duration, timeout: Duration)?
    /// How long the pong to the probe of a connection found open on return to the foreground
    /// may take before the connection is distrusted.
    public let foregroundProbeTimeout: Duration
    /// What the session does to save battery and data when the device asks it to
    /// (``Builder/powerSaving(_:)``, default `PowerSaving.standard`).
    public let powerSaving: PowerSaving
    /// How many messages one ``Subscription`` may hold unread
    /// (``Builder/subscriberBufferLimit(_:)``, default 10,000).
    public let subscriberBufferLimit: Int
    /// How many bytes of messages one ``Subscription`` may hold unread
    /// (``Builder/subscriberBufferBytes(_:)``, default 8 MiB).
    public let subscriberBufferBytes: Int
    /// How long a subscriber held back at its bound may go without reading before it counts as
    /// stopped (``Builder/subscriberStallTimeout(_:)``, default 60 s).
    public let subscriberStallTimeout: Duration
    /// The liveness the settings give, before the power saving rules and the policy adapt it:
    /// the heartbeat, and the probe on return whenever there is one.
    package var baseLiveness: Liveness {
        Liveness(heartbeat: heartbeat.map { Liveness.Heartbeat(interval: $0.interval, timeout: $0.timeout) }, probesOnReturn: heartbeat != nil)
    }
    let tokenProvider: TokenProvider?
    let customPolicy: (any SessionPolicy)?
    /// Where the session keeps its outbox, its positions and its protocol's session state
    /// across launches (``Builder/store(_:)``); `nil`: in memory only.
    public let store: (any SessionStore)?

    /// A fresh policy value for a session, as the settings describe.
    public func makePolicy() -> any SessionPolicy {
        switch mode {
        case .auto:
            AutoPolicy(.init(backgroundGrace: backgroundGrace, backoff: reconnectBackoff, stableAfter: stableConnectionAfter, powerSaving: powerSaving), jitter: jitter)
        case .manual:
            ManualPolicy(
                .init(backgroundTimeout: backgroundTimeout, backoff: reconnectBackoff, stableAfter: stableConnectionAfter, powerSaving: powerSaving), jitter: jitter
            )
        case .custom:
            customPolicy!
        }
    }

    /// The token for a new connection attempt.
    func token() async throws -> Secret? {
        try await tokenProvider?()
    }

    public var description: String {
        // Deliberately lists no credential.
        "AppSettings(url: \(serverURL.absoluteString), protocol: \(serverProtocol), mode: \(mode), backgroundTimeout: \(backgroundTimeout), "
            + "backgroundGrace: \(backgroundGrace), \(reconnectBackoff), connectTimeout: \(connectTimeout), "
            + "requestTimeout: \(requestTimeout), credentials: \(tokenProvider == nil ? "none" : "<redacted>"))"
    }
}

public import ConnectionPolicy
public import Foundation

extension AppSettings {
    /// Builds ``AppSettings`` step by step, as CometChat's `AppSettingsBuilder` does; `build()`
    /// checks every value and throws a ``SettingsError`` naming the first bad one.
    public struct Builder: Sendable {
        private var urlText: String?
        private var autoEstablish = true
        private var customPolicy: (any SessionPolicy)?
        private var backgroundTimeout: Duration = .seconds(30)
        private var backgroundGrace: Duration = .zero
        private var backoff: Backoff = .standard
        private var stableAfter: Duration = .seconds(5)
        private var connectTimeout: Duration = .seconds(10)
        private var requestTimeout: Duration = .seconds(10)
        private var allowInsecure = false
        private var outboxLimit = 100
        private var outboxByteLimit = 4 << 20
        private var outboxTimeout: Duration = .seconds(30)
        /// Where the session keeps what outlives the process (``store(_:)``): none by default.
        var store: (any SessionStore)?
        private var replayMode: ReplayMode = .pipelined
        private var replayAttempts = 3
        private var jitter: JitterSource?
        private var codec: any WireCodec = JSONWireCodec()
        private var serverProtocol: ServerProtocol = .tether
        private var tokenProvider: TokenProvider?
        private var logger: SessionLogger = .platformDefault
        private var heartbeat: (interval: Duration, timeout: Duration)? = (.seconds(25), .seconds(10))
        private var powerSaving = PowerSaving.standard
        private var probeTimeout: Duration = .seconds(3)
        var subscriberBufferLimit = 10_000
        var subscriberBufferBytes = 8 << 20
        var subscriberStallTimeout: Duration = .seconds(60)

        /// A builder with every setting at its default: set the server URL, then build.
        public init() {}

        /// The WebSocket endpoint, `wss://host[:port]/` (or `ws://` for loopback).
        public func serverURL(_ url: String) -> Builder {
            var copy = self
            copy.urlText = url
            return copy
        }

        /// The WebSocket endpoint.
        public func serverURL(_ url: URL) -> Builder {
            serverURL(url.absoluteString)
        }

        /// `true` (the default): Auto mode. `false`: Manual mode.
        public func autoEstablishSocketConnection(_ auto: Bool) -> Builder {
            var copy = self
            copy.autoEstablish = auto
            copy.customPolicy = nil
            return copy
        }

        /// Runs a policy the app wrote instead of Auto or Manual.
        public func policy(_ policy: some SessionPolicy) -> Builder {
            var copy = self
            copy.customPolicy = policy
            return copy
        }

        /// Manual mode: how long the connection stays open in the background without a
        /// `ping()` (default 30 s).
        public func backgroundTimeout(_ timeout: Duration) -> Builder {
            var copy = self
            copy.backgroundTimeout = timeout
            return copy
        }

        /// Auto mode: how long an open connection may stay open in the background (default 0).
        public func backgroundGrace(_ grace: Duration) -> Builder {
            var copy = self
            copy.backgroundGrace = grace
            return copy
        }

        /// The backoff between failed reconnect attempts (default `Backoff.standard`).
        public func reconnectBackoff(_ backoff: Backoff) -> Builder {
            var copy = self
            copy.backoff = backoff
            return copy
        }

        /// How long a connection must stay open before its loss is retried at once (default 5 s).
        public func stableConnectionAfter(_ duration: Duration) -> Builder {
            var copy = self
            copy.stableAfter = duration
            return copy
        }

        /// How long opening and authenticating may take (default 10 s).
        public func connectTimeout(_ timeout: Duration) -> Builder {
            var copy = self
            copy.connectTimeout = timeout
            return copy
        }

        /// How long a request may wait for its reply (default 10 s).
        public func requestTimeout(_ timeout: Duration) -> Builder {
            var copy = self
            copy.requestTimeout = timeout
            return copy
        }

        /// How many publishes may wait in the outbox while disconnected (default 100; 0 makes
        /// publishing without a connection throw at once).
        public func outboxLimit(_ limit: Int) -> Builder {
            var copy = self
            copy.outboxLimit = limit
            return copy
        }

        /// How many bytes of data (as JSON text) the publishes waiting in the outbox may hold
        /// together (default 4 MiB; 0 to 1 GiB): past it, a publish without a connection throws
        /// `outboxFull` — with a store, this bounds what the store keeps for them too.
        public func outboxByteLimit(_ bytes: Int) -> Builder {
            var copy = self
            copy.outboxByteLimit = bytes
            return copy
        }

        /// How long a publish may wait in the outbox (default 30 s). No timer runs in the
        /// background: an entry whose time ran out there fails on the return to the foreground.
        public func outboxTimeout(_ timeout: Duration) -> Builder {
            var copy = self
            copy.outboxTimeout = timeout
            return copy
        }

        /// How a replay runs (default `.pipelined`).
        public func replayMode(_ mode: ReplayMode) -> Builder {
            var copy = self
            copy.replayMode = mode
            return copy
        }

        /// How many times a replayed step is tried (default 3).
        public func replayAttempts(_ attempts: Int) -> Builder {
            var copy = self
            copy.replayAttempts = attempts
            return copy
        }

        /// Allows `ws://` to hosts other than loopback (default false: only `wss://`).
        public func allowInsecureTransport(_ allow: Bool) -> Builder {
            var copy = self
            copy.allowInsecure = allow
            return copy
        }

        /// A fixed token, sent in the protocol's first message (never in the URL or headers).
        public func token(_ token: String) -> Builder {
            let secret = Secret(token)
            return tokenProvider { secret }
        }

        /// Supplies the token for every connection attempt, as a plain `String` (what most auth
        /// libraries hand out).
        public func tokenProvider(_ provider: @escaping @Sendable () async throws -> String) -> Builder {
            tokenProvider { () async throws -> Secret? in Secret(try await provider()) }
        }

        /// Supplies the token for every connection attempt, as a ``Secret`` (`nil` for a server
        /// that needs no credentials).
        public func tokenProvider(_ provider: @escaping TokenProvider) -> Builder {
            var copy = self
            copy.tokenProvider = provider
            return copy
        }

        /// Where the log goes (default: `os.Logger` on Apple platforms, silent elsewhere).
        public func logger(_ logger: SessionLogger) -> Builder {
            var copy = self
            copy.logger = logger
            return copy
        }

        /// Logs at or above `level` to `sink`.
        public func logging(minimumLevel level: LogLevel = .info, _ sink: @escaping @Sendable (LogRecord) -> Void) -> Builder {
            logger(SessionLogger(minimumLevel: level, sink: sink))
        }

        /// The foreground heartbeat that finds half-open connections (default 25 s / 10 s). It
        /// never runs in the background: there, Manual mode's `ping()` is the heartbeat.
        public func heartbeat(interval: Duration, timeout: Duration) -> Builder {
            var copy = self
            copy.heartbeat = (interval, timeout)
            return copy
        }

        /// Turns the heartbeat off.
        public func noHeartbeat() -> Builder {
            var copy = self
            copy.heartbeat = nil
            return copy
        }

        /// What the session does to save battery and data on a constrained or expensive path,
        /// in Low Power Mode or on a hot device (default `PowerSaving.standard`: the foreground
        /// heartbeat at most doubled, to at most 55 s). `PowerSaving.off` keeps the settings'
        /// intervals in every condition.
        public func powerSaving(_ rules: PowerSaving) -> Builder {
            var copy = self
            copy.powerSaving = rules
            return copy
        }

        /// How long the probe of a connection found open on return to the foreground may wait
        /// for its pong (default 3 s).
        public func foregroundProbeTimeout(_ timeout: Duration) -> Builder {
            var copy = self
            copy.probeTimeout = timeout
            return copy
        }

        /// Where backoff jitter comes from (default: seeded from the system's random source).
        public func jitter(_ source: JitterSource) -> Builder {
            var copy = self
            copy.jitter = source
            return copy
        }

        /// The protocol the server speaks (default ``ServerProtocol/tether``):
        /// ``ServerProtocol/graphQLTransportWS(initPayload:)`` for Apollo Server, Hasura, Yoga or
        /// Strawberry; ``ServerProtocol/socketIO(events:acknowledgesPublishes:auth:credentialsInQuery:)``
        /// for a Socket.IO v4 server. See <doc:BackendProtocols> for what each can do.
        public func serverProtocol(_ serverProtocol: ServerProtocol) -> Builder {
            var copy = self
            copy.serverProtocol = serverProtocol
            return copy
        }

        /// The codec of Tether's own protocol (default `JSONWireCodec`: its limits, for tests).
        package func codec(_ codec: any WireCodec) -> Builder {
            var copy = self
            copy.codec = codec
            return copy
        }

        /// Checks every value and makes the settings.
        public func build() throws(SettingsError) -> AppSettings {
            let url = try Self.validatedURL(urlText, allowInsecure: allowInsecure)
            try Self.check(backgroundTimeout, "backgroundTimeout", allowZero: false)
            try Self.check(backgroundGrace, "backgroundGrace", allowZero: true)
            try Self.check(stableAfter, "stableConnectionAfter", allowZero: true)
            try Self.check(connectTimeout, "connectTimeout", allowZero: false)
            try Self.check(requestTimeout, "requestTimeout", allowZero: false)
            try Self.check(outboxTimeout, "outboxTimeout", allowZero: false)
            try Self.check(powerSaving.longestStretchedHeartbeat, "powerSaving.longestStretchedHeartbeat", allowZero: false)
            try Self.check(probeTimeout, "foregroundProbeTimeout", allowZero: false)
            if let heartbeat {
                try Self.check(heartbeat.interval, "heartbeat interval", allowZero: false)
                try Self.check(heartbeat.timeout, "heartbeat timeout", allowZero: false)
            }
            if let problem = backoff.problem { throw SettingsError(.invalidBackoff, problem) }
            guard (0...100_000).contains(outboxLimit) else { throw SettingsError(.invalidLimit, "outboxLimit must be 0 to 100000 (got \(outboxLimit))") }
            guard (0...(1 << 30)).contains(outboxByteLimit) else {
                throw SettingsError(.invalidLimit, "outboxByteLimit must be 0 to 1073741824 bytes (got \(outboxByteLimit))")
            }
            try checkFlowControl()
            guard (1...100).contains(replayAttempts) else { throw SettingsError(.invalidLimit, "replayAttempts must be 1 to 100 (got \(replayAttempts))") }
            if case .adapter(let adapter) = serverProtocol.kind, let problem = adapter.settingsProblem {
                throw SettingsError(.invalidProtocol, problem)
            }
            let mode: Mode = if let customPolicy { .custom(customPolicy.name) } else if autoEstablish { .auto } else { .manual }
            return AppSettings(
                serverURL: url,
                mode: mode,
                backgroundTimeout: backgroundTimeout,
                backgroundGrace: backgroundGrace,
                reconnectBackoff: backoff,
                stableConnectionAfter: stableAfter,
                connectTimeout: connectTimeout,
                requestTimeout: requestTimeout,
                outboxLimit: outboxLimit,
                outboxByteLimit: outboxByteLimit,
                outboxTimeout: outboxTimeout,
                replayMode: replayMode,
                replayAttempts: replayAttempts,
                allowsInsecureTransport: allowInsecure,
                jitter: jitter ?? .random(),
                codec: codec,
                serverProtocol: serverProtocol, wireProtocol: AppSettings.wireProtocol(serverProtocol, codec: codec),
                logger: logger,
                heartbeat: heartbeat,
                foregroundProbeTimeout: probeTimeout,
                powerSaving: powerSaving,
                subscriberBufferLimit: subscriberBufferLimit,
                subscriberBufferBytes: subscriberBufferBytes,
                subscriberStallTimeout: subscriberStallTimeout,
                tokenProvider: tokenProvider,
                customPolicy: customPolicy,
                store: store
            )
        }
    }
}

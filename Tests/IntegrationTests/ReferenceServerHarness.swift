import NIOTransport
import ReferenceServer
import SDK
import SDKTesting

/// Runs a reference server on a free loopback port for the duration of `body`.
func withReferenceServer<Result: Sendable>(
    _ configuration: RealtimeServer.Configuration = RealtimeServer.Configuration(tokens: ["it-token"]),
    _ body: (RealtimeServer, Int) async throws -> Result
) async throws -> Result {
    let server = RealtimeServer(configuration)
    return try await server.withRunning { port in try await body(server, port) }
}

/// Settings for a session against the reference server: short timeouts, so nothing is waited out.
func integrationSettings(port: Int, auto: Bool = true, token: String = "it-token", _ configure: (AppSettings.Builder) -> AppSettings.Builder = { $0 }) throws -> AppSettings {
    try configure(
        AppSettings.Builder()
            .serverURL("ws://127.0.0.1:\(port)/")
            .autoEstablishSocketConnection(auto)
            .token(token)
            .backgroundTimeout(.milliseconds(600))
            .reconnectBackoff(Backoff(initial: .milliseconds(50), multiplier: 2, maximum: .milliseconds(400), jitter: 0))
            .connectTimeout(.seconds(2))
            .requestTimeout(.seconds(2))
            .stableConnectionAfter(.milliseconds(200))
    ).build()
}

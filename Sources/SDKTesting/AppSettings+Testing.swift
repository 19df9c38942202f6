public import SDK

extension AppSettings {
    /// Settings for tests against a ``TestServer``: a loopback URL, no jitter (exact delays),
    /// no heartbeat (so only the test moves time; turn it on with `heartbeat(interval:timeout:)`),
    /// and Auto or Manual mode.
    public static func testing(
        auto: Bool = true,
        token: String = "test-token",
        configure: (AppSettings.Builder) -> AppSettings.Builder = { $0 }
    ) throws -> AppSettings {
        try configure(
            AppSettings.Builder()
                .serverURL("ws://127.0.0.1:9/")
                .autoEstablishSocketConnection(auto)
                .token(token)
                .jitter(.fixed(0))
                .noHeartbeat()
        ).build()
    }
}

import ConnectionPolicy
import SDK
import Testing

/// Every documented bound of a setting, at its exact edge on both sides: the last value accepted
/// and the first refused, with the error's code (issue 35, item 8).
@Suite("AppSettings: every bound at its edge")
struct AppSettingsEdgeTests {
    static let base = AppSettings.Builder().serverURL("wss://example.com/")
    static let day = Duration.seconds(86_400)
    static let tick = Duration.nanoseconds(1)

    /// (what, the builder at the edge, the builder one step past it, the code refused)
    static let edges: [(String, AppSettings.Builder, AppSettings.Builder, SettingsError.Code)] = [
        ("outboxLimit 0 (lowest)", base.outboxLimit(0), base.outboxLimit(-1), .invalidLimit),
        ("outboxLimit 100000 (highest)", base.outboxLimit(100_000), base.outboxLimit(100_001), .invalidLimit),
        ("subscriberBufferLimit 1", base.subscriberBufferLimit(1), base.subscriberBufferLimit(0), .invalidLimit),
        ("subscriberBufferLimit 1000000", base.subscriberBufferLimit(1_000_000), base.subscriberBufferLimit(1_000_001), .invalidLimit),
        ("replayAttempts 1", base.replayAttempts(1), base.replayAttempts(0), .invalidLimit),
        ("replayAttempts 100", base.replayAttempts(100), base.replayAttempts(101), .invalidLimit),
        ("backgroundTimeout more than 0", base.backgroundTimeout(tick), base.backgroundTimeout(.zero), .invalidDuration),
        ("backgroundTimeout 24 h", base.backgroundTimeout(day), base.backgroundTimeout(day + tick), .invalidDuration),
        ("backgroundGrace 0", base.backgroundGrace(.zero), base.backgroundGrace(.zero - tick), .invalidDuration),
        ("backgroundGrace 24 h", base.backgroundGrace(day), base.backgroundGrace(day + tick), .invalidDuration),
        ("stableConnectionAfter 0", base.stableConnectionAfter(.zero), base.stableConnectionAfter(.zero - tick), .invalidDuration),
        ("stableConnectionAfter 24 h", base.stableConnectionAfter(day), base.stableConnectionAfter(day + tick), .invalidDuration),
        ("connectTimeout more than 0", base.connectTimeout(tick), base.connectTimeout(.zero), .invalidDuration),
        ("connectTimeout 24 h", base.connectTimeout(day), base.connectTimeout(day + tick), .invalidDuration),
        ("requestTimeout more than 0", base.requestTimeout(tick), base.requestTimeout(.zero), .invalidDuration),
        ("requestTimeout 24 h", base.requestTimeout(day), base.requestTimeout(day + tick), .invalidDuration),
        ("outboxTimeout more than 0", base.outboxTimeout(tick), base.outboxTimeout(.zero), .invalidDuration),
        ("outboxTimeout 24 h", base.outboxTimeout(day), base.outboxTimeout(day + tick), .invalidDuration),
        ("foregroundProbeTimeout more than 0", base.foregroundProbeTimeout(tick), base.foregroundProbeTimeout(.zero), .invalidDuration),
        ("foregroundProbeTimeout 24 h", base.foregroundProbeTimeout(day), base.foregroundProbeTimeout(day + tick), .invalidDuration),
        ("heartbeat interval more than 0", base.heartbeat(interval: tick, timeout: .seconds(1)), base.heartbeat(interval: .zero, timeout: .seconds(1)), .invalidDuration),
        ("heartbeat timeout 24 h", base.heartbeat(interval: .seconds(1), timeout: day), base.heartbeat(interval: .seconds(1), timeout: day + tick), .invalidDuration),
        ("port 1", AppSettings.Builder().serverURL("wss://example.com:1/"), AppSettings.Builder().serverURL("wss://example.com:0/"), .invalidURL),
        ("port 65535", AppSettings.Builder().serverURL("wss://example.com:65535/"), AppSettings.Builder().serverURL("wss://example.com:65536/"), .invalidURL),
        ("backoff jitter 1", base.reconnectBackoff(Backoff(jitter: 1)), base.reconnectBackoff(Backoff(jitter: 1.000_001)), .invalidBackoff),
        ("backoff jitter 0", base.reconnectBackoff(Backoff(jitter: 0)), base.reconnectBackoff(Backoff(jitter: -0.000_001)), .invalidBackoff),
        ("backoff maxAttempts 1", base.reconnectBackoff(Backoff(maxAttempts: 1)), base.reconnectBackoff(Backoff(maxAttempts: 0)), .invalidBackoff),
        ("backoff multiplier 1", base.reconnectBackoff(Backoff(multiplier: 1)), base.reconnectBackoff(Backoff(multiplier: 0.999_999)), .invalidBackoff),
        ("backoff maximum = initial", base.reconnectBackoff(Backoff(initial: .seconds(2), maximum: .seconds(2))),
         base.reconnectBackoff(Backoff(initial: .seconds(2), maximum: .seconds(2) - tick)), .invalidBackoff),
        ("backoff initial more than 0", base.reconnectBackoff(Backoff(initial: tick, maximum: .seconds(1))),
         base.reconnectBackoff(Backoff(initial: .zero, maximum: .seconds(1))), .invalidBackoff),
    ]

    @Test("the edge is accepted; one step past it is refused with its code", arguments: edges)
    func edge(what: String, accepted: AppSettings.Builder, refused: AppSettings.Builder, code: SettingsError.Code) {
        #expect(throws: Never.self, "\(what): accepted") { _ = try accepted.build() }
        do {
            _ = try refused.build()
            Issue.record("\(what): one step past the edge was accepted")
        } catch {
            #expect(error.code == code, "\(what): \(error)")
        }
    }
}

import Conformance
import ReferenceServer
import SDK
import Testing

/// The conformance suite (every MUST of docs/PROTOCOL.md, and bounded abuse) against the
/// reference server, in process, over loopback. Each check gets a server of its own whose one
/// short limit is the one the check is about (so the abuse checks are quick); its other limits
/// are long, so no check's own client hits a limit it does not test on a loaded machine (the
/// checks run in parallel, also under ThreadSanitizer, and beside other processes).
/// CI also runs it against the server as a process of its own (`.ci/conformance`), with 2,000
/// idle sockets and the server's memory read from /proc.
@Suite("Conformance of the reference server", .timeLimit(.minutes(3)))
struct ConformanceIntegrationTests {
    /// The checks that test a timeout, by what their names say, and the short limit each gets.
    static let timedChecks: [(says: String, limit: any WritableKeyPath<ServerLimits, Duration> & Sendable, short: Duration)] = [
        ("a slow upgrade", \.upgradeTimeout, .seconds(4)),
        ("within the authentication timeout", \.authenticationTimeout, .seconds(5)),
        ("past the idle timeout", \.idleTimeout, .seconds(8)),
    ]

    static func limits(for check: String) -> ServerLimits {
        var limits = ServerLimits()
        limits.upgradeTimeout = .seconds(60)
        limits.authenticationTimeout = .seconds(60)
        limits.idleTimeout = .seconds(60)
        limits.maxQueuedBytes = 1 << 20
        for timed in timedChecks where check.contains(timed.says) { limits[keyPath: timed.limit] = timed.short }
        return limits
    }

    @Test("each timed check is found by its name (else it would get the long limits)")
    func timedChecksFound() {
        for timed in Self.timedChecks {
            #expect(ConformanceSuite.checkNames.filter { $0.contains(timed.says) }.count == 1, "\(timed.says)")
        }
    }

    @Test("the reference server passes", arguments: ConformanceSuite.checkNames)
    func check(name: String) async throws {
        let limits = Self.limits(for: name)
        let server = RealtimeServer(.init(tokens: ["conformance"], retention: 20, limits: limits))
        try await server.withRunning { port in
            let target = ConformanceSuite.Target(
                port: port, token: "conformance", authenticationTimeout: limits.authenticationTimeout,
                upgradeTimeout: limits.upgradeTimeout, idleTimeout: limits.idleTimeout, idleSockets: 300, floodMessages: 400
            )
            let failure = await ConformanceSuite(target).run(check: name)
            #expect(failure == nil, "\(failure ?? "")")
            // What the outside cannot see: the queue stayed within its bound, and the stalled
            // reader was cut off as a slow consumer (not by a timeout).
            #expect(server.peakQueuedBytes <= limits.maxQueuedBytes)
            if name.contains("stops reading") {
                #expect(server.slowConsumerCloseCount == 1)
            }
        }
    }
}

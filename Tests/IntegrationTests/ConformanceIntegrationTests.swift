import Conformance
import ReferenceServer
import SDK
import Testing

/// The conformance suite (every MUST of docs/PROTOCOL.md, and bounded abuse) against the
/// reference server, in process, over loopback, with limits short enough for the abuse checks to
/// be quick and long enough that no check's own client hits them on a loaded machine (the
/// checks run in parallel, also under ThreadSanitizer).
/// CI also runs it against the server as a process of its own (`.ci/conformance`), with 2,000
/// idle sockets and the server's memory read from /proc.
@Suite("Conformance of the reference server", .timeLimit(.minutes(3)))
struct ConformanceIntegrationTests {
    static var limits: ServerLimits {
        var limits = ServerLimits()
        limits.upgradeTimeout = .seconds(4)
        limits.authenticationTimeout = .seconds(5)
        limits.idleTimeout = .seconds(8)
        limits.maxQueuedBytes = 1 << 20
        return limits
    }

    @Test("the reference server passes", arguments: ConformanceSuite.checkNames)
    func check(name: String) async throws {
        let server = RealtimeServer(.init(tokens: ["conformance"], retention: 20, limits: Self.limits))
        try await server.withRunning { port in
            let target = ConformanceSuite.Target(
                port: port, token: "conformance", authenticationTimeout: Self.limits.authenticationTimeout,
                upgradeTimeout: Self.limits.upgradeTimeout, idleTimeout: Self.limits.idleTimeout, idleSockets: 300, floodMessages: 400
            )
            let failure = await ConformanceSuite(target).run(check: name)
            #expect(failure == nil, "\(failure ?? "")")
            // What the outside cannot see: the queue stayed within its bound, and the stalled
            // reader was cut off as a slow consumer (not by a timeout).
            #expect(server.peakQueuedBytes <= Self.limits.maxQueuedBytes)
            if name.contains("stops reading") {
                #expect(server.slowConsumerCloseCount == 1)
            }
        }
    }
}

import Foundation
import NIOTransport
import ReferenceServer
import SDK

/// `bench handshake`: open and close a bare WebSocket many times against the reference server,
/// and report the slowest opens (to find stalls in the TCP connect or the upgrade).
struct HandshakeBench {
    let cycles: Int

    func run() async throws {
        let server = RealtimeServer(RealtimeServer.Configuration(tokens: ["bench"]))
        try await server.withRunning { port in
            let transport = NIOWebSocketTransport(connectTimeout: .seconds(3))
            var times: [Duration] = []
            var failures = 0
            var baseline = 0
            for cycle in 0..<cycles {
                if cycle == min(500, cycles / 10) { baseline = residentBytes() }
                let start = ContinuousClock.now
                do {
                    let connection = try await transport.open(url: URL(string: "ws://127.0.0.1:\(port)/")!, headers: [:])
                    times.append(ContinuousClock.now - start)
                    await connection.close(code: .normal, reason: "")
                } catch {
                    failures += 1
                    print("  open failed after \((ContinuousClock.now - start).micros) µs: \(error)")
                }
                await server.waitForOpenConnections(0)
            }
            let stats = Percentiles(times)
            print("handshake: cycles=\(cycles) p50_us=\(stats.p50.micros) p99_us=\(stats.p99.micros) max_us=\(stats.max.micros) failures=\(failures) rss_growth_kib=\((residentBytes() - baseline) / 1024)")
        }
    }
}

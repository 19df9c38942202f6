import Foundation
import ReferenceServer
import SDK

/// The reference server as a benchmark drives it: in a process of its own when
/// `realtime-server` was built beside `bench` (so this process runs the client alone), in this
/// process otherwise; behind the delay proxy (`bench proxy`, a process of its own too) when a
/// round trip is emulated.
protocol BenchServer: Sendable {
    /// Publishes one message to each of the channels `prefix`0 … `prefix`(count − 1).
    func publish(toEach prefix: String, count: Int, text: String) async throws
    /// Publishes `count` messages (the same small JSON object) to `channel`.
    func publish(_ count: Int, to channel: String) async throws
    /// Publishes them paced: groups of 1 … `largestGroup`, one write each, a little apart
    /// (returns before they are all out).
    func publish(_ count: Int, to channel: String, paced largestGroup: Int) async throws
    /// Returns once no client is connected.
    func waitForNoConnections() async throws
    /// The server's CPU time so far (`nil` in this process: it cannot be told from the client's)
    /// and the frames it has handed to its writers.
    func counters() async throws -> ServerCounters
}

/// What a server has spent and sent so far (``BenchServer/counters()``).
struct ServerCounters {
    var cpu: Duration?
    var framesSent: Int
}

enum BenchServerSet {
    /// Runs `body` with the server and the port a client connects to (the proxy's, when `rtt`
    /// is not zero).
    static func withServer<Result: Sendable>(
        rtt: Duration, retention: Int, isolation: isolated (any Actor)? = #isolation,
        _ body: (any BenchServer, Int) async throws -> Result
    ) async throws -> Result {
        // BENCH_SERVER_PORT=N (and BENCH_CLIENT_PORT=M, a proxy in front of it): servers started
        // by hand, e.g. to trace the proxy or profile the server alone.
        let environment = ProcessInfo.processInfo.environment
        if let serverPort = environment["BENCH_SERVER_PORT"].flatMap(Int.init) {
            return try await body(ServerProcess.attached(port: serverPort), environment["BENCH_CLIENT_PORT"].flatMap(Int.init) ?? serverPort)
        }
        guard let serverPath = ServerProcess.sibling("realtime-server") else {
            print("  server: in this process (build realtime-server beside bench to measure the client alone)")
            let server = RealtimeServer(RealtimeServer.Configuration(tokens: ["bench"], retention: retention))
            return try await server.withRunning { port in
                guard rtt > .zero else { return try await body(server, port) }
                return try await DelayProxy.withRunning(delay: rtt, upstreamPort: port) { proxied in try await body(server, proxied) }
            }
        }
        let server = try await ServerProcess.start(serverPath, ["--port", "0", "--token", "bench", "--retention", String(retention)])
        defer { server.stop() }
        guard rtt > .zero else {
            print("  server: \(serverPath) in its own process")
            return try await body(server, server.port)
        }
        let proxy = try await ServerProcess.start(CommandLine.arguments[0], ["proxy", "--upstream-port", String(server.port), "--delay-ms", rtt.milliseconds.formatted(0)])
        defer { proxy.stop() }
        print("  server: \(serverPath) in its own process, behind `bench proxy` (\(rtt.milliseconds.formatted(0)) ms) in another")
        return try await body(server, proxy.port)
    }
}

extension ServerProcess: BenchServer {
    func publish(toEach prefix: String, count: Int, text: String) async throws {
        _ = try await admin("/admin/publish?channel=\(prefix)&each=\(count)&text=\(text)")
    }

    func publish(_ count: Int, to channel: String) async throws {
        _ = try await admin("/admin/publish?channel=\(channel)&count=\(count)&json=1")
    }

    func publish(_ count: Int, to channel: String, paced largestGroup: Int) async throws {
        _ = try await admin("/admin/publish?channel=\(channel)&count=\(count)&json=1&paced=\(largestGroup)")
    }

    func waitForNoConnections() async throws {
        try await waitForOpenConnections(0)
    }

    func counters() async throws -> ServerCounters {
        let status = try await admin("/admin/status")
        let frames = status.split(separator: " ").first { $0.hasPrefix("frames_sent=") }.flatMap { Int($0.dropFirst("frames_sent=".count)) }
        return ServerCounters(cpu: cpuTime, framesSent: frames ?? 0)
    }
}

extension RealtimeServer: BenchServer {
    func publish(toEach prefix: String, count: Int, text: String) async throws {
        for index in 0..<count { try publish(.string(text), to: prefix + String(index)) }
    }

    func publish(_ count: Int, to channel: String) async throws {
        for _ in 0..<count { try publish(ThroughputBench.payload, to: channel) }
    }

    func publish(_ count: Int, to channel: String, paced largestGroup: Int) async throws {
        publishPaced(ThroughputBench.payload, to: channel, count: count, largestGroup: largestGroup)
    }

    func waitForNoConnections() async throws {
        await waitForOpenConnections(0)
    }

    func counters() async throws -> ServerCounters { ServerCounters(cpu: nil, framesSent: framesSentCount) }
}

import Foundation
import NIOTransport
import PeerServers
import SDK

/// `bench recovery --adapters`: the same measure as ``RecoveryBench`` — from the return to the
/// foreground to the recovery report — over the protocol adapters, each against the real
/// server the integration tests use (strawberry-graphql, python-socketio, mosquitto), behind
/// the same delay proxy. Each is printed beside the fewest round trips its protocol allows
/// after the upgrade's TCP, and beside the time the server takes on its own to answer a bare
/// upgrade (mosquitto 2.0's websockets answer after ~200 ms whoever asks). `BENCH_ADAPTER=NAME`
/// runs one.
struct AdapterRecoveryBench {
    struct Backend: Sendable {
        let name: String
        /// The fewest round trips, and why.
        let minimumRounds: Int
        let rounds: String
        let serverProtocol: ServerProtocol
        let path: String
        /// The subprotocol the client offers (for the bare upgrade's timing).
        let subprotocol: String?
        /// Where the adapter's upgrade request goes (Engine.IO adds its path and query).
        var upgradePath: String { serverProtocol.name == "socket.io" ? "/socket.io/?EIO=4&transport=websocket" : path }
        let token: String
        let topic: @Sendable (Int) -> Topic
    }

    let subscriptions: Int
    let rtt: Duration
    let runs: Int

    static let backends = [
        Backend(
            name: "graphql-transport-ws", minimumRounds: 2, rounds: "the upgrade, then connection_init/ack; a subscribe has no answer to wait for",
            serverProtocol: .graphQLTransportWS(), path: "/graphql", subprotocol: "graphql-transport-ws", token: "s3cret",
            topic: { .graphQL("ticks-\($0)", query: "subscription($room: String!) { ticks(room: $room) }", variables: ["room": .string("r\($0)")]) }
        ),
        Backend(
            name: "socket.io", minimumRounds: 3, rounds: "the upgrade with Engine.IO's open, the namespace connect, then the joins (acknowledged)",
            serverProtocol: .socketIO(), path: "/", subprotocol: nil, token: "s3cret", topic: { Topic("room-\($0)") }
        ),
        Backend(
            name: "mqtt", minimumRounds: 2, rounds: "the upgrade, then CONNECT/CONNACK with the session present; plus the queue marker's round",
            serverProtocol: .mqtt(clientID: "bench-recovery", username: MQTTBroker.username), path: "/", subprotocol: "mqtt", token: MQTTBroker.password,
            topic: { Topic("bench/\($0)") }
        ),
    ]

    func run() async throws {
        var figures: [String] = []
        let only = ProcessInfo.processInfo.environment["BENCH_ADAPTER"]
        for backend in Self.backends where only == nil || only == backend.name {
            let median = try await withServer(backend) { port in try await measure(backend, port: port) }
            figures.append("\(backend.name)_ms=\(median.milliseconds.formatted(1)) \(backend.name)_rtt=\((median.milliseconds / rtt.milliseconds).formatted(2))")
        }
        print("adapter-recovery: subscriptions=\(subscriptions) rtt_ms=\(rtt.milliseconds.formatted(0)) " + figures.joined(separator: " "))
    }

    /// Runs `body` with the backend's server started, behind the delay proxy; stops both.
    private func withServer(_ backend: Backend, _ body: (Int) async throws -> Duration) async throws -> Duration {
        let upstream: Int
        let stop: () async -> Void
        switch backend.name {
        case "mqtt":
            let broker = try await MQTTBroker.start()
            (upstream, stop) = (broker.port, { await broker.stop(removingDirectory: true) })
        case "socket.io":
            let server = try await PeerServer.start(.socketIO)
            (upstream, stop) = (server.port, { await server.stop() })
        default:
            let server = try await PeerServer.start(.graphQL)
            (upstream, stop) = (server.port, { await server.stop() })
        }
        do {
            // What the server takes on its own to answer an upgrade (no proxy, no client
            // library): a recovery cannot take less than the round trips plus this.
            var bare: [Duration] = []
            for _ in 0..<5 { bare.append(try await AdminRequest.upgradeTime(port: upstream, path: backend.upgradePath, subprotocol: backend.subprotocol)) }
            print("  \(backend.name): the server answers a bare upgrade in \(bare.sorted()[2].milliseconds.formatted(1)) ms (median of 5, no proxy)")
            let proxy = try await ServerProcess.start(CommandLine.arguments[0], ["proxy", "--upstream-port", String(upstream), "--delay-ms", rtt.milliseconds.formatted(0)])
            defer { proxy.stop() }
            let result = try await body(proxy.port)
            await stop()
            return result
        } catch {
            await stop()
            throw error
        }
    }

    /// The median of `runs` recoveries, as the recovery report measured them.
    private func measure(_ backend: Backend, port: Int) async throws -> Duration {
        let settings = try AppSettings.Builder()
            .serverURL("ws://127.0.0.1:\(port)\(backend.path)")
            .token(backend.token)
            .serverProtocol(backend.serverProtocol)
            .replayMode(.pipelined)
            .requestTimeout(.seconds(30))
            .connectTimeout(.seconds(30))
            .build()
        var statuses = Optional<AsyncStream<ConnectionStatus>.Iterator>.none
        let recoveries = try await RecoveryRuns(settings: settings, transport: NIOWebSocketTransport(), runs: runs, away: rtt * 10).measure(
            subscribe: { session in
                statuses = session.statusUpdates.makeAsyncIterator()
                var held: [Subscription] = []
                for index in 0..<subscriptions { held.append(try await session.subscribe(to: backend.topic(index))) }
                return held
            },
            // Away for ten round trips: the old socket's close is over before the return.
            whenGone: { _ in
                while let status = await statuses?.next(), status.isConnected || status == .connecting {}
            },
            // A protocol that cannot resume reports every channel to refetch: recovered, but not
            // complete; every step must still have succeeded.
            check: { report in
                guard report.steps.allSatisfy({ $0.outcome == .succeeded }) else {
                    throw SessionError(.rejected, "a recovery step failed over \(backend.name): \(report)")
                }
            }
        )
        print("  \(backend.name) x\(runs), \(subscriptions) subscriptions: "
            + recoveries.summary(rtt: rtt, note: " (fewest possible: \(backend.minimumRounds) RTT — \(backend.rounds))"))
        return recoveries.median
    }
}

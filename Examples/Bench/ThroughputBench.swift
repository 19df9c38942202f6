import Foundation
import NIOTransport
import ReferenceServer
import SDK

/// `bench throughput`: inbound messages per second delivered to an app consumer through
/// `Session`, against the raw NIO WebSocket client (frames counted, nothing decoded) on the same
/// server, the same payloads, in the same run.
struct ThroughputBench {
    let messages: Int
    let rounds: Int
    static let payload: JSONValue = ["text": "the quick brown fox jumps over the lazy dog", "from": "ada", "n": 42]

    func run() async throws {
        let server = RealtimeServer(RealtimeServer.Configuration(tokens: ["bench"], retention: 10))
        try await server.withRunning { port in
            var sessionRates: [Double] = []
            var rawRates: [Double] = []
            for round in 0..<rounds {
                // Alternate the order, so neither side always runs on a warmer machine.
                if round.isMultiple(of: 2) {
                    sessionRates.append(try await session(port: port, server: server, channel: "s\(round)"))
                    rawRates.append(try await raw(port: port, server: server, channel: "r\(round)"))
                } else {
                    rawRates.append(try await raw(port: port, server: server, channel: "r\(round)"))
                    sessionRates.append(try await session(port: port, server: server, channel: "s\(round)"))
                }
            }
            let sessionRate = sessionRates.sorted()[rounds / 2]
            let rawRate = rawRates.sorted()[rounds / 2]
            print("  session: \(sessionRates.map { Int($0) }) msgs/s; raw: \(rawRates.map { Int($0) }) msgs/s (medians below)")
            print("throughput: session_msgs_per_s=\(Int(sessionRate)) raw_msgs_per_s=\(Int(rawRate)) ratio=\((sessionRate / rawRate).formatted(3))")
        }
    }

    private func publishAll(_ server: RealtimeServer, channel: String) throws {
        for _ in 0..<messages { try server.publish(Self.payload, to: channel) }
    }

    /// Messages per second through a session to a consumer of its `Subscription`.
    private func session(port: Int, server: RealtimeServer, channel: String) async throws -> Double {
        let settings = try AppSettings.Builder().serverURL("ws://127.0.0.1:\(port)/").token("bench").noHeartbeat().build()
        let session = Session(settings: settings, transport: NIOWebSocketTransport())
        var rate = 0.0
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await session.run() }
            try await session.connect()
            let subscription = try await session.subscribe(to: channel)
            let start = ContinuousClock.now
            try publishAll(server, channel: channel)
            var received = 0
            for try await _ in subscription {
                received += 1
                if received == messages { break }
            }
            rate = Double(messages) / (ContinuousClock.now - start).secondsValue
            await session.shutdown()
            group.cancelAll()
        }
        return rate
    }

    /// Messages per second on a bare NIO WebSocket connection: authenticate and subscribe by
    /// hand, then count text frames.
    private func raw(port: Int, server: RealtimeServer, channel: String) async throws -> Double {
        let codec = JSONWireCodec()
        let connection = try await NIOWebSocketTransport().open(url: .init(string: "ws://127.0.0.1:\(port)/")!, headers: [:])
        var events = connection.events.makeAsyncIterator()
        try await connection.send(codec.encode(ClientMessage.authenticate(id: 1, token: Secret("bench"))))
        _ = await events.next()
        try await connection.send(codec.encode(ClientMessage.subscribe(id: 2, channel: channel, since: nil)))
        _ = await events.next()
        let start = ContinuousClock.now
        try publishAll(server, channel: channel)
        var received = 0
        while received < messages, let event = await events.next() {
            if case .frame(.text) = event { received += 1 }
        }
        let rate = Double(received) / (ContinuousClock.now - start).secondsValue
        await connection.close(code: .normal, reason: "done")
        return rate
    }
}

extension Duration {
    var secondsValue: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}

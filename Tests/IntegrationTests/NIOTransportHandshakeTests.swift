import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOTransport
import NIOWebSocket
import ReferenceServer
import SDK
import SDKTesting
import Testing

/// `Transport` offers subprotocols and reports the one the server chose; a refused upgrade
/// reports its HTTP status (issue 10), with the NIO transport over loopback.
@Suite("NIO transport: subprotocols and refused upgrades", .timeLimit(.minutes(1)))
struct NIOTransportHandshakeTests {
    /// A WebSocket server that answers every upgrade choosing `choose(offered)` as subprotocol.
    func withUpgradeServer<Result: Sendable>(
        choose: @escaping @Sendable ([String]) -> String?, _ body: (Int) async throws -> Result
    ) async throws -> Result {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let upgrader = NIOWebSocketServerUpgrader(
                    shouldUpgrade: { channel, head in
                        let offered = head.headers["sec-websocket-protocol"].flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
                        var headers = HTTPHeaders()
                        if let chosen = choose(offered) { headers.add(name: "Sec-WebSocket-Protocol", value: chosen) }
                        return channel.eventLoop.makeSucceededFuture(headers)
                    },
                    upgradePipelineHandler: { channel, _ in channel.eventLoop.makeSucceededVoidFuture() }
                )
                return channel.pipeline.configureHTTPServerPipeline(withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
            }
            .bind(host: "127.0.0.1", port: 0).get()
        defer { channel.close(promise: nil) }
        return try await body(channel.localAddress?.port ?? 0)
    }

    @Test("the server's choice among the offered subprotocols is reported")
    func negotiated() async throws {
        try await withUpgradeServer(choose: { $0.last }) { port in
            let connection = try await NIOWebSocketTransport().open(url: URL(string: "ws://127.0.0.1:\(port)/")!, headers: [:], subprotocols: ["graphql-ws", "graphql-transport-ws"])
            #expect(connection.subprotocol == "graphql-transport-ws")
            await connection.close(code: .normal, reason: "")
        }
    }

    @Test("no subprotocol offered or chosen: nil")
    func none() async throws {
        try await withUpgradeServer(choose: { _ in nil }) { port in
            let connection = try await NIOWebSocketTransport().open(url: URL(string: "ws://127.0.0.1:\(port)/")!, headers: [:])
            #expect(connection.subprotocol == nil)
            await connection.close(code: .normal, reason: "")
        }
    }

    @Test("a subprotocol the client did not offer fails the handshake")
    func notOffered() async throws {
        try await withUpgradeServer(choose: { _ in "mqtt" }) { port in
            let error = await #expect(throws: TransportError.self) {
                try await NIOWebSocketTransport().open(url: URL(string: "ws://127.0.0.1:\(port)/")!, headers: [:], subprotocols: ["graphql-transport-ws"])
            }
            #expect(error?.code == .handshakeFailed)
        }
    }

    @Test("a refused upgrade reports its HTTP status: 503 while refusing, 404 on another path")
    func refusedStatus() async throws {
        var configuration = RealtimeServer.Configuration(tokens: ["it-token"])
        configuration.faults.refuseConnections = true
        try await withReferenceServer(configuration) { server, port in
            let refused = await #expect(throws: TransportError.self) {
                try await NIOWebSocketTransport().open(url: URL(string: "ws://127.0.0.1:\(port)/")!, headers: [:])
            }
            #expect(refused?.code == .handshakeFailed)
            #expect(refused?.httpStatus == 503)
            server.updateFaults { $0.refuseConnections = false }
            let missing = await #expect(throws: TransportError.self) {
                try await NIOWebSocketTransport().open(url: URL(string: "ws://127.0.0.1:\(port)/elsewhere")!, headers: [:])
            }
            #expect(missing?.httpStatus == 404)
        }
    }
}

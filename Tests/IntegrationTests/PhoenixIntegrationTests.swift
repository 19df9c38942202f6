import Foundation
import NIOTransport
import PeerServers
import SDK
import SDKTesting
import Testing

/// The session over Phoenix against the scripted Phoenix peer (Examples/PeerServers/Apps/
/// phoenix_app.py, which plays back a real Phoenix 1.7.24 server's frames: no Phoenix server can
/// be installed here), over the NIO transport on loopback: a real 403 at the upgrade, the
/// server's idle timeout (close 1002, and Cowboy's 1000) retried, the keep-alive holding the
/// socket open past it, a crashed channel rejoined on the same socket, replies of every kind.
@Suite("Phoenix against the scripted peer", .timeLimit(.minutes(3)), .serialized)
struct PhoenixIntegrationTests {
    func settings(port: Int, serverProtocol: ServerProtocol = .phoenix(params: ["user": "it"], replyTimeout: .milliseconds(500)),
                  _ configure: (AppSettings.Builder) -> AppSettings.Builder = { $0 }) throws -> AppSettings {
        try configure(AppSettings.Builder().serverURL("ws://127.0.0.1:\(port)/socket").serverProtocol(serverProtocol).token("s3cret").peerTestTimings()).build()
    }

    @Test("the server's idle timeout closes the socket (1002 on Bandit, 1000 on Cowboy): neither is final, the session reconnects", arguments: ["1002", "1000"])
    func idleTimeoutIsRetried(code: String) async throws {
        try await PeerServer.withRunning(.phoenix, environment: ["IDLE_TIMEOUT_MS": "700", "IDLE_CLOSE_CODE": code]) { server in
            // No heartbeat of the session's own and a keep-alive longer than the server's timeout.
            let settings = try settings(port: server.port, serverProtocol: .phoenix(keepAlive: .seconds(30))) { $0.noHeartbeat() }
            let transport = CountingTransport(NIOWebSocketTransport())
            let session = Session(settings: settings, transport: transport)
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
                try await status.waitFor(.connected)
                #expect(transport.openedCount >= 2)
            }
        }
    }

    @Test("the keep-alive holds the socket open past the server's idle timeout")
    func keepAliveHoldsTheSocket() async throws {
        try await PeerServer.withRunning(.phoenix, environment: ["IDLE_TIMEOUT_MS": "700"]) { server in
            let settings = try settings(port: server.port, serverProtocol: .phoenix(keepAlive: .milliseconds(200))) { $0.noHeartbeat() }
            let transport = CountingTransport(NIOWebSocketTransport())
            let session = Session(settings: settings, transport: transport)
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                try await Task.sleep(for: .seconds(2))  // real time against a real server's timeout
                #expect(session.status == .connected && transport.openedCount == 1)
            }
        }
    }

    @Test("replies of every kind: echo acknowledged with its response, fail rejected with its reason, silent sent-unconfirmed after the bound")
    func replies() async throws {
        try await PeerServer.withRunning(.phoenix) { server in
            let session = Session(settings: try settings(port: server.port), transport: NIOWebSocketTransport())
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                let room = try await session.subscribe(to: .phoenix("room:replies"))
                let echo = try await session.publish(["event": "echo", "payload": ["n": 1]], to: "room:replies")
                #expect(echo == PublishReceipt(.acknowledged, response: ["n": 1]))
                await #expect(throws: SessionError.self) { try await session.publish(["event": "fail"], to: "room:replies") }
                #expect(try await session.publish(["event": "silent"], to: "room:replies") == PublishReceipt(.sentUnconfirmed))
                await #expect(throws: SessionError.self, "a topic not joined: unmatched topic") {
                    try await session.publish(["event": "echo"], to: "room:elsewhere")
                }
                withExtendedLifetime(room) {}
            }
        }
    }

    @Test("a crashed channel: phx_error reaches the app, the session rejoins on the same socket, messages flow again")
    func crashedChannel() async throws {
        try await PeerServer.withRunning(.phoenix) { server in
            let transport = CountingTransport(NIOWebSocketTransport())
            let session = Session(settings: try settings(port: server.port), transport: transport)
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                var messages = try await session.subscribe(to: .phoenix("room:crash")).makeAsyncIterator()
                #expect(PresenceView(try #require(await messages.next()))?.keys == ["it"])
                _ = try await session.publish(["event": "crash"], to: "room:crash")
                var events: [String] = []
                while let message = try await messages.next() {
                    let event = message.data["event"]?.stringValue ?? "?"
                    events.append(event)
                    if event == "presence", events.contains("phx_error") { break }
                }
                #expect(events.contains("phx_error"), "\(events)")
                _ = try await session.publish(["event": "new_msg", "payload": ["body": "after"]], to: "room:crash")
                let next = try await messages.next()
                #expect(next?.data["payload"]?["body"] == "after", "\(String(describing: next))")
                #expect(transport.openedCount == 1, "the socket stayed")
            }
        }
    }
}

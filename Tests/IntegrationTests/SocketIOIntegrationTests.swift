import Foundation
import NIOTransport
import PeerServers
import SDK
import Testing

/// The Socket.IO machine against a real, unmodified python-socketio server
/// (Examples/PeerServers/Apps/socketio_app.py under uvicorn, heartbeat shortened to 1 s + 1 s), over the NIO
/// transport on loopback.
@Suite("Socket.IO against python-socketio", .timeLimit(.minutes(3)), .serialized)
struct SocketIOIntegrationTests {
    func driver(_ server: PeerServer) async throws -> MachineDriver<SocketIO.Machine> {
        let url = URL(string: "ws://127.0.0.1:\(server.port)\(SocketIO.path)?\(SocketIO.query)")!
        return MachineDriver(SocketIO().makeMachine(), over: try await NIOWebSocketTransport().open(url: url, headers: [:]))
    }

    @Test("rejected credentials: connect_error (44), read as credentialsRejected without retry")
    func rejected() async throws {
        try await PeerServer.withRunning(.socketIO) { server in
            let driver = try await driver(server)
            try await driver.start(credentials: Secret("wrong"))
            guard case .end(let ending)? = try await driver.next() else {
                Issue.record("not ended")
                return
            }
            #expect(ending.reason.code == .credentialsRejected)
            #expect(ending.disposition == .doNotRetry)
        }
    }

    @Test("accepted: the server's heartbeat bound is learnt; join, publish with its ack, the message comes back to the room")
    func session() async throws {
        try await PeerServer.withRunning(.socketIO) { server in
            let driver = try await driver(server)
            try await driver.start(credentials: Secret("s3cret"))
            #expect(try await driver.next() == .ready)
            #expect(await driver.armed[SocketIO.heartbeat] == .milliseconds(2000), "pingInterval + pingTimeout from the open packet")
            try await driver.perform(.subscribe(7, Topic("room-1"), resume: nil))
            #expect(try await driver.next() == .subscribed(7, .live(at: nil)))
            try await driver.perform(.publish(3, Topic("room-1"), ["text": "hi"], key: nil))
            var seen: [WireAction] = []
            for _ in 0..<2 { if let action = try await driver.next() { seen.append(action) } }
            #expect(seen.contains(.delivery(7, ["room": "room-1", "text": "hi"], position: nil)))
            #expect(seen.contains(.replied(3, .success(.acknowledged(position: nil, payload: [["ok": true]])))))
            await driver.close()
        }
    }

    @Test("the server's pings are answered, so it keeps the connection past its ping timeout")
    func heartbeat() async throws {
        try await PeerServer.withRunning(.socketIO) { server in
            let driver = try await driver(server)
            try await driver.start(credentials: Secret("s3cret"))
            #expect(try await driver.next() == .ready)
            // 1 s interval + 1 s timeout: after 3.5 s an unanswered client would be gone.
            try await driver.perform(.subscribe(7, Topic("room-1"), resume: nil))
            _ = try await driver.next()
            // Keep reading (and answering pings) for 3.5 s: nothing else happens meanwhile.
            await #expect(throws: MachineDriver<SocketIO.Machine>.Timeout.self) { try await driver.next(within: .milliseconds(3500)) }
            try await driver.perform(.publish(3, Topic("room-1"), "still here", key: nil))
            let reply = try await driver.next { if case .replied = $0 { true } else { false } }
            #expect(reply == .replied(3, .success(.acknowledged(position: nil, payload: [["ok": true]]))))
            #expect(await driver.sent.filter { $0 == .text("3") }.count >= 2, "pongs to the server's pings")
            await driver.close()
        }
    }

    @Test("the server disconnecting the client (41) means: do not reconnect")
    func kicked() async throws {
        try await PeerServer.withRunning(.socketIO) { server in
            let url = URL(string: "ws://127.0.0.1:\(server.port)\(SocketIO.path)?\(SocketIO.query)")!
            // The fixture's "kick_me" event makes the server disconnect this client.
            let machine = SocketIO(events: SocketIO.Events(publish: "kick_me")).makeMachine()
            let driver = MachineDriver(machine, over: try await NIOWebSocketTransport().open(url: url, headers: [:]))
            try await driver.start(credentials: Secret("s3cret"))
            #expect(try await driver.next() == .ready)
            try await driver.perform(.publish(3, Topic("x"), "bye", key: nil))
            let ending = try await driver.next { if case .end = $0 { true } else { false } }
            #expect(ending == .end(WireEnding(.serverClosed("io server disconnect"), .doNotRetry)))
            await driver.close()
        }
    }
}

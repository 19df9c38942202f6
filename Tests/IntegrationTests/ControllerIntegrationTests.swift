import Foundation
import ReferenceChatClient
import ReferenceServer
import SDK
import SDKTesting
import Testing

/// The public controller driving a client that is not a `Session` — `ReferenceChatClient`, a bare
/// swift-nio WebSocket client — against the reference server on loopback: seed 004's Auto and
/// Manual tables and seed 000's edge cases, end to end over real sockets.
@Suite("ConnectionController driving a bare NIO client against the reference server", .timeLimit(.minutes(1)))
struct ControllerIntegrationTests {
    let lifecycle = LifecycleDriver()
    let backoff = Backoff(initial: .milliseconds(50), multiplier: 2, maximum: .milliseconds(400), jitter: 0)

    func client(_ port: Int) -> ReferenceChatClient {
        ReferenceChatClient(url: URL(string: "ws://127.0.0.1:\(port)/")!, token: "it-token")
    }

    func auto(_ client: ReferenceChatClient) -> ConnectionController {
        ConnectionController(connection: client, policy: AutoPolicy(.init(backoff: backoff, stableAfter: .milliseconds(200))), lifecycle: lifecycle, logger: .silent)
    }

    /// The server publishes `text` to `room`; true when it is the client's next message.
    func roundTrip(_ server: RealtimeServer, _ messages: inout AsyncStream<ChannelMessage>.Iterator, _ text: String) async throws -> Bool {
        _ = try server.publish(.string(text), to: "room")
        return await messages.next()?.data == .string(text)
    }

    @Test("seed 004, Auto: connected at launch; background disconnects at once; foreground reconnects and the client's rooms are joined again")
    func autoTable() async throws {
        try await withReferenceServer { server, port in
            let client = client(port)
            let controller = auto(client)
            try await client.join("room")
            try await withRunningController(controller, patience: .realServer) { status in
                var messages = client.messages.makeAsyncIterator()
                try await status.waitFor(.connected)
                #expect(try await roundTrip(server, &messages, "one"))
                await lifecycle.background()
                #expect(controller.status == .disconnected(.appBackgrounded))
                #expect(controller.armedTimers == [], "nothing runs in the background in Auto mode")
                await server.waitForOpenConnections(0)
                await lifecycle.foreground()
                try await status.waitFor(.connected)
                #expect(try await roundTrip(server, &messages, "two"))
                #expect(server.acceptedConnectionCount == 2)
            }
            await server.waitForOpenConnections(0)
            #expect(await client.mostOpenSockets == 1)
        }
    }

    @Test("seed 004, Manual: nothing at launch; connect(); the server answers ping() in the background; without pings the watchdog disconnects; no reconnect by itself")
    func manualTable() async throws {
        try await withReferenceServer { server, port in
            let client = client(port)
            let controller = ConnectionController(
                connection: client, policy: ManualPolicy(.init(backgroundTimeout: .seconds(2), backoff: backoff)), lifecycle: lifecycle,
                ping: { try await client.ping() }, logger: .silent
            )
            try await withRunningController(controller, patience: .realServer) { status in
                #expect(controller.status == .disconnected(.notStarted))
                #expect(server.acceptedConnectionCount == 0)
                try await controller.connect()
                #expect(controller.status == .connected)
                await lifecycle.background()
                #expect(controller.armedTimers == [.watchdog])
                // A real round trip inside the window: 2 s, not 0.6, so a loaded CI machine (the
                // suites run in parallel) cannot stretch the ping past it and close the socket
                // under it ("closed").
                try await controller.ping()
                try await status.waitFor(.disconnected(.watchdogExpired))
                await server.waitForOpenConnections(0)
                await lifecycle.foreground()
                #expect(controller.status == .disconnected(.watchdogExpired))
                #expect(server.acceptedConnectionCount == 1)
                try await controller.connect()
                #expect(server.acceptedConnectionCount == 2)
            }
        }
    }

    @Test("seed 000: backgrounded during a reconnection attempt → cancelled, no retry; the foreground tries again")
    func backgroundDuringReconnect() async throws {
        try await withReferenceServer { server, port in
            let controller = auto(client(port))
            try await withRunningController(controller, patience: .realServer) { status in
                try await status.waitFor(.connected)
                server.updateFaults { $0.refuseConnections = true }
                server.dropAllConnections()
                try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
                await lifecycle.background()
                #expect(controller.status == .disconnected(.appBackgrounded))
                #expect(controller.armedTimers == [], "no retry is left armed in the background")
                server.updateFaults { $0.refuseConnections = false }
                await lifecycle.foreground()
                try await status.waitFor(.connected)
            }
        }
    }

    @Test("seed 000: rapid background/foreground cycles converge on one connection, never two sockets")
    func rapidCycles() async throws {
        try await withReferenceServer { server, port in
            let client = client(port)
            let controller = auto(client)
            try await withRunningController(controller, patience: .realServer) { status in
                try await status.waitFor(.connected)
                for _ in 0..<20 {
                    await lifecycle.background()
                    await lifecycle.foreground()
                }
                try await status.waitFor(.connected)
                await server.waitForOpenConnections(1)
                let seen = await status.history
                #expect(!seen.contains { if case .reconnecting = $0 { true } else { false } }, "no attempt was lost or timed out on the way: \(seen)")
            }
            #expect(await client.mostOpenSockets == 1)
        }
    }

    @Test("seed 000: connect() is safe whatever the state — refused as notWanted in the background, a no-op when connected")
    func connectIsSafe() async throws {
        try await withReferenceServer { server, port in
            let controller = auto(client(port))
            try await withRunningController(controller, patience: .realServer) { status in
                try await status.waitFor(.connected)
                await lifecycle.background()
                do {
                    try await controller.connect()
                    Issue.record("connect() in the background connected in Auto mode")
                } catch let error as SessionError {
                    #expect(error.code == .notWanted)
                }
                await lifecycle.foreground()
                try await status.waitFor(.connected)
                try await controller.connect()
                #expect(server.acceptedConnectionCount == 2, "connect() while connected opens nothing")
            }
        }
    }

    @Test("seed 000: after the user's disconnect() nothing reconnects by itself — not the foreground, not the network")
    func manualDisconnectIsSticky() async throws {
        try await withReferenceServer { server, port in
            let controller = auto(client(port))
            try await withRunningController(controller, patience: .realServer) { status in
                try await status.waitFor(.connected)
                await controller.disconnect()
                await server.waitForOpenConnections(0)
                await lifecycle.background()
                await lifecycle.foreground()
                await controller.setNetworkReachable(false)
                await controller.setNetworkReachable(true)
                #expect(controller.status == .disconnected(.appRequested))
                #expect(controller.armedTimers == [])
                #expect(server.acceptedConnectionCount == 1)
                try await controller.connect()
                #expect(controller.status == .connected)
            }
        }
    }
}

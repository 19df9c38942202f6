import Foundation
import NIOTransport
import PeerServers
import SDK
import SDKTesting
import Testing

/// A backend the session is tested against: a real, unmodified third-party server.
struct PeerBackend: Sendable, CustomStringConvertible {
    let app: PeerServer.App
    let serverProtocol: ServerProtocol
    let path: String
    let topic: Topic
    /// What `publish` sends (a mutation for GraphQL, a message for Socket.IO).
    let publishData: JSONValue
    /// Indicates that messages arrive only when published (Socket.IO) rather than by themselves
    /// (the GraphQL fixture's ticks).
    let needsPublishToDeliver: Bool
    /// How long a stopped server goes unnoticed at most: the client heartbeat's interval +
    /// timeout (GraphQL), the server heartbeat's pingInterval + pingTimeout (Socket.IO).
    let deadLinkBound: Duration

    var description: String { serverProtocol.name }

    static let graphQL = PeerBackend(
        app: .graphQL, serverProtocol: .graphQLTransportWS(), path: "/graphql",
        topic: .graphQL("ticks", query: "subscription($room: String!) { ticks(room: $room) }", variables: ["room": "r1"]),
        publishData: ["query": #"mutation { post(text: "hi") }"#], needsPublishToDeliver: false, deadLinkBound: .seconds(2)
    )
    static let socketIO = PeerBackend(
        app: .socketIO, serverProtocol: .socketIO(), path: "/", topic: Topic("room-1"),
        publishData: ["text": "hi"], needsPublishToDeliver: true, deadLinkBound: .seconds(2)
    )

    static let phoenix = PeerBackend(
        app: .phoenix, serverProtocol: .phoenix(params: ["user": "it"]), path: "/socket", topic: .phoenix("room:it"),
        publishData: ["event": "new_msg", "payload": ["body": "hi"]], needsPublishToDeliver: true, deadLinkBound: .seconds(2)
    )

    /// The scripted Supabase peer: a public channel that echoes and acknowledges broadcasts.
    /// (Not in the rejected-credentials test: Supabase's 403 is retried a few times first, as
    /// `SupabaseIntegrationTests` checks.)
    static let supabase = PeerBackend(
        app: .supabase, serverProtocol: .supabaseRealtime(apiKey: "anon"), path: "/realtime/v1",
        topic: .supabase("it", config: SupabaseChannelConfig(receivesOwnBroadcasts: true, acknowledgesBroadcasts: true)),
        publishData: ["event": "msg", "payload": ["body": "hi"]], needsPublishToDeliver: true, deadLinkBound: .seconds(2)
    )

    func settings(port: Int, auto: Bool = true, token: String = "s3cret", _ configure: (AppSettings.Builder) -> AppSettings.Builder = { $0 }) throws -> AppSettings {
        try configure(
            AppSettings.Builder()
                .serverURL("ws://127.0.0.1:\(port)\(path)")
                .serverProtocol(serverProtocol)
                .autoEstablishSocketConnection(auto)
                .token(token)
                .peerTestTimings()
        ).build()
    }

    /// The next message on `messages`, publishing one first where the server only echoes.
    func nextMessage(_ session: Session, _ messages: inout Subscription.AsyncIterator) async throws -> ChannelMessage? {
        if needsPublishToDeliver { _ = try await session.publish(publishData, to: topic.name) }
        return try await messages.next()
    }

    /// A message delivered from now on: a new subscriber of the held topic sees only those (a
    /// held subscription may have buffered messages from before a disconnect).
    func freshMessage(_ session: Session) async throws -> ChannelMessage? {
        var messages = try await session.subscribe(to: topic).makeAsyncIterator()
        return try await nextMessage(session, &messages)
    }
}

/// The whole session — policies, resubscribe, recovery report, liveness — over each adapter
/// against the real server, with process-level faults: SIGKILL and restart, SIGSTOP.
@Suite("Sessions against real third-party servers", .timeLimit(.minutes(3)), .serialized)
struct AdapterSessionIntegrationTests {
    @Test("rejected credentials: disconnected as credentialsRejected, no retry loop", arguments: [PeerBackend.graphQL, .socketIO, .phoenix])
    func rejected(backend: PeerBackend) async throws {
        try await PeerServer.withRunning(backend.app) { server in
            let transport = CountingTransport(NIOWebSocketTransport())
            let session = Session(settings: try backend.settings(port: server.port, token: "wrong"), transport: transport)
            try await withRunningSession(session, patience: .realServer) { status in
                try await expectRejectedWithoutRetry(status, session: session, transport: transport)
                if case .disconnected(let reason) = session.status { #expect(reason.code == .credentialsRejected) } else { Issue.record("reconnected: \(session.status)") }
            }
        }
    }

    @Test("Auto: subscribe, receive, publish acknowledged; background closes at once; foreground resubscribes and says refetch", arguments: [PeerBackend.graphQL, .socketIO, .phoenix, .supabase])
    func auto(backend: PeerBackend) async throws {
        try await PeerServer.withRunning(backend.app) { server in
            let lifecycle = LifecycleDriver()
            let transport = CountingTransport(NIOWebSocketTransport())
            let session = Session(settings: try backend.settings(port: server.port), transport: transport, lifecycle: lifecycle)
            var reports = session.recoveryReports.makeAsyncIterator()
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                _ = await reports.next()
                var messages = try await session.subscribe(to: backend.topic).makeAsyncIterator()
                let first = try #require(try await backend.nextMessage(session, &messages))
                #expect(first.channel == backend.topic.name && first.sequence == nil)
                let receipt = try await session.publish(backend.publishData, to: backend.topic.name)
                #expect(receipt.isAcknowledged, "every fixture acknowledges: \(receipt)")

                await lifecycle.background()
                #expect(session.status == .disconnected(.appBackgrounded))
                #expect(await transport.waitForOpen(0, timeout: .seconds(5)))

                await lifecycle.foreground()
                try await status.waitFor(.connected)
                let report = try #require(await reports.next())
                #expect(report.trigger == .foreground)
                #expect(report.refetch == [backend.topic.name], "no resume on this protocol: \(report)")
                #expect(try await backend.freshMessage(session)?.channel == backend.topic.name, "resubscribed")
                #expect(transport.maxOpen == 1)
            }
        }
    }

    @Test("Manual: the background watchdog disconnects after its timeout", arguments: [PeerBackend.graphQL, .socketIO, .phoenix, .supabase])
    func manualWatchdog(backend: PeerBackend) async throws {
        try await PeerServer.withRunning(backend.app) { server in
            let settings = try backend.settings(port: server.port, auto: false) { $0.backgroundTimeout(.milliseconds(800)) }
            try await expectManualWatchdog(settings, transport: NIOWebSocketTransport())
        }
    }

    @Test("the server killed (SIGKILL) and restarted: reconnects, resubscribes, the report says refetch; never two sockets", arguments: [PeerBackend.graphQL, .socketIO, .phoenix, .supabase])
    func killedAndRestarted(backend: PeerBackend) async throws {
        let first = try await PeerServer.start(backend.app)
        let port = first.port
        let transport = CountingTransport(NIOWebSocketTransport())
        let session = Session(settings: try backend.settings(port: port), transport: transport)
        var reports = session.recoveryReports.makeAsyncIterator()
        var restarted: PeerServer?
        do {
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                _ = await reports.next()
                var messages = try await session.subscribe(to: backend.topic).makeAsyncIterator()
                _ = try await backend.nextMessage(session, &messages)
                first.send(SIGKILL)
                await first.exited()
                try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
                restarted = try await PeerServer.start(backend.app, port: port)
                try await status.waitFor(.connected)
                let report = try #require(await reports.next())
                #expect(report.trigger == .reconnect)
                #expect(report.refetch == [backend.topic.name], "\(report)")
                #expect(try await backend.freshMessage(session)?.channel == backend.topic.name, "resubscribed")
                #expect(transport.maxOpen == 1)
            }
        } catch {
            await first.stop()
            await restarted?.stop()
            throw error
        }
        await first.stop()
        await restarted?.stop()
    }

    @Test("the server stopped (SIGSTOP): the heartbeat or watchdog finds the dead link within its bound", arguments: [PeerBackend.graphQL, .socketIO, .phoenix, .supabase])
    func stopped(backend: PeerBackend) async throws {
        try await PeerServer.withRunning(backend.app) { server in
            let session = Session(settings: try backend.settings(port: server.port), transport: NIOWebSocketTransport())
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                var messages = try await session.subscribe(to: backend.topic).makeAsyncIterator()
                _ = try await backend.nextMessage(session, &messages)
                let clock = ContinuousClock()
                server.send(SIGSTOP)
                let start = clock.now
                try await status.waitFor { if case .reconnecting(let reason) = $0 { reason.code == .networkLost } else { false } }
                let noticed = clock.now - start
                server.send(SIGCONT)
                // The bound, plus one beat of slack for a loaded machine: never the TCP timeout.
                #expect(noticed <= backend.deadLinkBound + .seconds(3), "noticed after \(noticed)")
                try await status.waitFor(.connected)
            }
        }
    }
}

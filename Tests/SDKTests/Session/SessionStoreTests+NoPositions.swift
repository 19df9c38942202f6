import Foundation
@testable import SDK
import SDKTesting
import Testing

/// A channel held by a killed launch, on a protocol (or a channel) without positions: the
/// relaunch cannot catch it up, so its recovery report names it in `refetch` — never silent.
extension SessionStoreTests {
    /// A server played frame by frame: how a socket becomes ready, and how a subscribe is answered.
    struct NoPositionPeer: Sendable, CustomTestStringConvertible {
        let name: String
        let channel: String
        let subprotocol: String?
        let serverProtocol: @Sendable () -> ServerProtocol
        /// Answers the socket's handshake (nothing where the protocol is ready at open).
        let ready: @Sendable (ScriptedTransport, ScriptedLog) async -> Void
        /// Answers the subscribe frame the session sent.
        let answer: @Sendable (ScriptedTransport, String) -> Void

        var testDescription: String { name }

        static let graphQL = NoPositionPeer(
            name: "graphql-transport-ws", channel: "messages", subprotocol: "graphql-transport-ws",
            serverProtocol: { .graphQLTransportWS() },
            ready: { transport, log in
                _ = await log.nextSent()  // connection_init
                transport.push(#"{"type":"connection_ack"}"#)
            },
            answer: { _, _ in }  // no subscribe acknowledgement in this protocol
        )

        static let socketIO = NoPositionPeer(
            name: "Socket.IO", channel: "room-1", subprotocol: nil,
            serverProtocol: { .socketIO() },
            ready: { transport, log in
                _ = await log.next()  // opened: the server speaks first
                transport.push(#"0{"sid":"a","upgrades":[],"pingTimeout":20000,"pingInterval":25000,"maxPayload":1000000}"#)
                _ = await log.nextSent()  // the namespace's CONNECT
                transport.push(#"40{"sid":"b"}"#)
            },
            answer: { transport, join in
                // `42<ack id>["join",…]` is answered `43<ack id>[{"ok":true}]`.
                let id = join.dropFirst(2).prefix { $0.isNumber }
                transport.push("43\(id)" + #"[{"ok":true}]"#)
            }
        )

        static let phoenix = NoPositionPeer(
            name: "Phoenix", channel: "room:lobby", subprotocol: nil,
            serverProtocol: { .phoenix() },
            ready: { _, _ in },
            answer: { transport, join in
                let ref = (try? PhoenixMessage.decode(.text(join)).joinRef) ?? "?"
                transport.push(#"["\#(ref)","\#(ref)","room:lobby","phx_reply",{"response":{},"status":"ok"}]"#)
            }
        )

        static let supabasePublic = NoPositionPeer(
            name: "Supabase, a public channel", channel: "auto", subprotocol: nil,
            serverProtocol: { .adapter(PhoenixChannels(credentials: .none, supabase: .init(apiKey: "anon")), name: "supabase-realtime") },
            ready: { _, _ in },
            answer: { transport, join in
                let ref = (try? PhoenixMessage.decode(.text(join)).joinRef) ?? "?"
                transport.push(#"["\#(ref)","\#(ref)","realtime:auto","phx_reply",{"response":{"postgres_changes":[]},"status":"ok"}]"#)
            }
        )
    }

    @Test(
        "a protocol or channel without positions: the channel a killed launch held, subscribed again by the relaunch, is named in its recovery report's refetch",
        arguments: [NoPositionPeer.graphQL, .socketIO, .phoenix, .supabasePublic]
    )
    func heldChannelWithoutPositionsIsRefetched(_ peer: NoPositionPeer) async throws {
        let store = InMemorySessionStore()
        func launch(_ store: InMemorySessionStore, _ transport: ScriptedTransport) throws -> Session {
            Session(settings: try .testing { $0.serverProtocol(peer.serverProtocol()).store(store) }, transport: transport, clock: clock)
        }
        let first = ScriptedTransport(subprotocol: peer.subprotocol)
        let killed = try launch(store, first)
        try await withRunningSession(killed) { status in
            let log = ScriptedLog(first)
            await peer.ready(first, log)
            try await status.waitFor(.connected)
            let subscribing = Task { try await killed.subscribe(to: peer.channel) }
            peer.answer(first, try #require(await log.nextSent(), "the subscribe"))
            _ = try await subscribing.value
            await clock.settle()
            store.kill()
        }
        let again = ScriptedTransport(subprotocol: peer.subprotocol)
        let relaunch = try launch(store.relaunched(), again)
        let reports = PatientReader(relaunch.recoveryReports)
        try await withRunningSession(relaunch) { status in
            let log = ScriptedLog(again)
            let subscribing = Task { try await relaunch.subscribe(to: peer.channel) }
            await peer.ready(again, log)
            peer.answer(again, try #require(await log.nextSent(), "the relaunch's subscribe"))
            _ = try await subscribing.value
            try await status.waitFor(.connected)
            let report = try #require(await reports.next(), "the launch's recovery report")
            #expect(report.trigger == .launch)
            #expect(report.refetch == [peer.channel] && report.channelsToRefetch == [peer.channel], "what the killed launch missed is unknown: \(report)")
            #expect(!report.isComplete)
        }
    }

    @Test("a channel this launch subscribes to for the first time is no recovery: the launch's report names nothing to refetch")
    func newChannelIsNotRefetched() async throws {
        let peer = NoPositionPeer.socketIO
        let transport = ScriptedTransport()
        let session = Session(settings: try .testing { $0.serverProtocol(peer.serverProtocol()).store(InMemorySessionStore()) }, transport: transport, clock: clock)
        let reports = PatientReader(session.recoveryReports)
        try await withRunningSession(session) { status in
            let log = ScriptedLog(transport)
            let subscribing = Task { try await session.subscribe(to: peer.channel) }
            await peer.ready(transport, log)
            peer.answer(transport, try #require(await log.nextSent(), "the subscribe"))
            _ = try await subscribing.value
            try await status.waitFor(.connected)
            let report = try #require(await reports.next())
            #expect(report.trigger == .launch && report.refetch.isEmpty && report.isComplete, "\(report)")
        }
    }
}

import Foundation
import NIOTransport
import PeerServers
import SDK
import SDKTesting
import Testing

/// The session over Supabase Realtime against the scripted Supabase peer
/// (Examples/PeerServers/Apps/supabase_app.py, which plays back a real supabase/realtime v2.52.1
/// server's frames: no Supabase server can be installed here), over the NIO transport on
/// loopback, through the public API only: what a recovery report says after a reconnect,
/// presence tracked across reconnects, tokens that expire while joined, the limits' closes and
/// refusals, postgres_changes per binding.
@Suite("Supabase Realtime against the scripted peer", .timeLimit(.minutes(3)), .serialized)
struct SupabaseIntegrationTests {
    /// An unsigned JWT expiring `seconds` from now (the peer reads `exp`; it checks no signature).
    static func jwt(expiresIn seconds: Double) -> String {
        func part(_ json: String) -> String {
            Data(json.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let exp = Int64(Date().timeIntervalSince1970 + seconds)
        return part(#"{"alg":"HS256","typ":"JWT"}"#) + "." + part(#"{"role":"authenticated","exp":\#(exp)}"#) + ".c2ln"
    }

    func settings(port: Int, auto: Bool = true, token: @escaping @Sendable () async throws -> String = { "user-token" }) throws -> AppSettings {
        try AppSettings.Builder().serverURL("ws://127.0.0.1:\(port)/realtime/v1").serverProtocol(.supabaseRealtime(apiKey: "anon", replyTimeout: .seconds(1)))
            .tokenProvider(token).autoEstablishSocketConnection(auto).peerTestTimings().build()
    }

    /// The events (a broadcast's `n` as `n<N>`) until one for which `stop` holds.
    static func events(_ messages: inout Subscription.AsyncIterator, until stop: (String) -> Bool) async throws -> [String] {
        var events: [String] = []
        while let message = try await messages.next() {
            let event = message.data["event"]?.stringValue ?? "?"
            let n = message.data["payload"]?["payload"]?["n"]?.integerValue
            events.append(event == "broadcast" ? n.map { "n\($0)" } ?? "broadcast" : event)
            if stop(events.last!) { break }
        }
        return events
    }

    @Test("Manual: a public channel after disconnect() and connect() is named for refetch; a database-only private channel is caught up by the replay, with no replay_gap though the first replayed was never live (issue 34 §1-3)")
    func recoveryReports() async throws {
        try await PeerServer.withRunning(.supabase) { server in
            let session = Session(settings: try settings(port: server.port, auto: false), transport: NIOWebSocketTransport())
            var reports = session.recoveryReports.makeAsyncIterator()
            try await withRunningSession(session, patience: .realServer) { status in
                try await session.connect()
                _ = await reports.next()
                let open = try await session.subscribe(to: .supabase("open"))
                let config = SupabaseChannelConfig(isPrivate: true, replayLimit: 25, broadcastOrigin: .databaseOnly)
                var room = try await session.subscribe(to: .supabase("room", config: config)).makeAsyncIterator()
                #expect(try await Self.events(&room) { $0 == "presence" } == ["presence"])
                _ = try await httpGet(port: server.port, path: "/send?topic=room&n=0&live=0")  // stored, not broadcast live yet
                _ = try await httpGet(port: server.port, path: "/send?topic=room&n=1")
                #expect(try await Self.events(&room) { $0 == "n1" } == ["n1"])

                await session.disconnect()
                for n in 2...3 { _ = try await httpGet(port: server.port, path: "/send?topic=room&n=\(n)") }
                try await session.connect()
                let report = try #require(await reports.next())
                #expect(report.trigger == .appConnect)
                #expect(report.refetch == ["open"] && report.gaps.isEmpty, "\(report)")
                #expect(try await Self.events(&room) { $0 == "presence" } == ["n0", "n2", "n3", "presence"], "what was missed, the repeat (n1) dropped, no replay_gap")
                withExtendedLifetime(open) {}
            }
        }
    }

    @Test("track: another client sees it, sees it leave with the socket and come back with the rejoin; untrack is not undone by the next one")
    func presenceAcrossReconnects() async throws {
        try await PeerServer.withRunning(.supabase) { server in
            let alice = Session(settings: try settings(port: server.port, auto: false), transport: NIOWebSocketTransport())
            let bob = Session(settings: try settings(port: server.port), transport: NIOWebSocketTransport())
            try await withRunningSession(bob, patience: .realServer) { bobStatus in
                try await withRunningSession(alice, patience: .realServer) { _ in
                    try await bobStatus.waitFor(.connected)
                    var seen = try await bob.subscribe(to: .supabase("lobby", config: SupabaseChannelConfig(presenceKey: "bob"))).makeAsyncIterator()
                    try await alice.connect()
                    let lobby = try await alice.subscribe(to: .supabase("lobby", config: SupabaseChannelConfig(presenceKey: "alice")))
                    try await alice.track(["status": "online"], on: "lobby")
                    func view(until present: Bool) async throws -> PresenceView? {
                        while let message = try await seen.next() {
                            if let view = PresenceView(message), view.keys.contains("alice") == present { return view }
                        }
                        return nil
                    }
                    #expect(try await view(until: true)?.members["alice"]?.first?["status"] == "online")
                    await alice.disconnect()
                    #expect(try await view(until: false) != nil, "the socket gone, alice left")
                    try await alice.connect()
                    #expect(try await view(until: true)?.members["alice"]?.first?["status"] == "online", "tracked again with the rejoin")
                    try await alice.untrack(on: "lobby")
                    #expect(try await view(until: false) != nil)
                    await alice.disconnect()
                    try await alice.connect()
                    try await alice.track(["status": "back"], on: "lobby")
                    let back = try await view(until: true)
                    #expect(back?.members["alice"]?.count == 1 && back?.members["alice"]?.first?["status"] == "back",
                            "the first view with alice after the rejoin is the new track: the untrack held")
                    withExtendedLifetime(lobby) {}
                }
            }
        }
    }

    @Test("a token expiring in 3 s: the session asks the provider ahead and pushes the new one, the channel stays; one it could not refresh ahead is closed by the server and rejoined with a fresh one")
    func tokensOutliveTheirExpiry() async throws {
        try await PeerServer.withRunning(.supabase) { server in
            // The provider's answers in turn: a short token (the connect, then the refresh ahead
            // gets it again: not refreshed), then one good for an hour.
            let short = Self.jwt(expiresIn: 3), long = Self.jwt(expiresIn: 3600)
            let asked = Locked(0)
            let settings = try settings(port: server.port) {
                asked.withLock { count in
                    count += 1
                    return count <= 2 ? short : long
                }
            }
            let session = Session(settings: settings, transport: NIOWebSocketTransport())
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                var room = try await session.subscribe(to: .supabase("tok", config: SupabaseChannelConfig(receivesOwnBroadcasts: true))).makeAsyncIterator()
                let events = try await Self.events(&room) { $0 == "system" }
                #expect(events.last == "system", "the server's word: \(events)")
                try await Task.sleep(for: .seconds(2))  // real time: the rejoin with the fresh token
                _ = try await session.publish(["event": "msg", "payload": ["n": 7]], to: "tok")
                #expect(try await Self.events(&room) { $0 == "n7" }.last == "n7", "the subscription goes on after the rejoin")
                #expect(asked.withLock { $0 } >= 3)
            }
        }
    }

    @Test("an INSERT binding gets only INSERTs (the server sends UPDATEs too); a channel closed for its message rate is rejoined and flows again")
    func changesAndRateLimit() async throws {
        try await PeerServer.withRunning(.supabase) { server in
            let session = Session(settings: try settings(port: server.port), transport: NIOWebSocketTransport())
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                let config = SupabaseChannelConfig(receivesOwnBroadcasts: true, postgresChanges: [PostgresChangeFilter(event: "INSERT", table: "todos")])
                var db = try await session.subscribe(to: .supabase("db", config: config)).makeAsyncIterator()
                #expect(try await Self.events(&db) { $0 == "presence" } == ["system", "presence"])
                _ = try await httpGet(port: server.port, path: "/change?table=todos&type=UPDATE&id=1")
                _ = try await httpGet(port: server.port, path: "/change?table=todos&type=INSERT&id=2")
                var next = try await db.next()
                #expect(next?.data["payload"]?["data"]?["type"] == "INSERT", "the UPDATE was not delivered: \(String(describing: next))")

                _ = try await httpGet(port: server.port, path: "/ratelimit?topic=db")
                next = try await db.next()
                #expect(next?.data["payload"]?["message"] == "Too many messages per second")
                try await Task.sleep(for: .milliseconds(1500))  // real time: the rejoin after 1 s
                _ = try await session.publish(["event": "msg", "payload": ["n": 9]], to: "db")
                #expect(try await Self.events(&db) { $0 == "n9" }.last == "n9")
            }
        }
    }

    @Test("a 403 that lifts (the joins-per-second limit): retried after 1 and 2 s, then connected")
    func refusalsThatLift() async throws {
        try await PeerServer.withRunning(.supabase) { server in
            _ = try await httpGet(port: server.port, path: "/refuse?count=2")
            let transport = CountingTransport(NIOWebSocketTransport())
            let session = Session(settings: try settings(port: server.port), transport: transport)
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor { $0.reason?.detail?.contains("(2 of 4 in a row)") == true }
                try await status.waitFor(.connected)
                #expect(transport.openedCount == 1, "two refusals, then open")
            }
        }
    }
}

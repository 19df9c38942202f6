import ConnectionPolicy
import Foundation
@testable import SDK
import SDKTesting
import Testing

/// The session over Supabase Realtime, the test playing the server frame by frame on the test
/// clock (frames as supabase/realtime's `realtime_channel.ex` sends them; see
/// `SupabaseMachineTests`): a token refresh without a reconnect, and a private channel's replay
/// after a drop, reported caught up, with what it repeats dropped.
@Suite("Session: Supabase Realtime", .timeLimit(.minutes(1)))
struct SessionSupabaseTests {
    let clock = TestClock()
    static let wallClock = Locked<Int64>(1_800_000_000_000)
    static let socketURL = URL(string: "ws://127.0.0.1:9/realtime/v1/websocket?apikey=anon&vsn=2.0.0")!

    func session(_ transport: ScriptedTransport, token: Locked<String>) throws -> Session {
        let adapter = PhoenixChannels(credentials: .none, supabase: .init(apiKey: "anon", now: { Self.wallClock.withLock { $0 } }))
        let settings = try AppSettings.testing { builder in
            builder.serverProtocol(.adapter(adapter, name: "supabase-realtime")).tokenProvider { token.withLock { $0 } }
        }
        return Session(settings: settings, transport: transport, clock: clock)
    }

    @Test("a new token: credentialsChanged() pushes it to every joined channel as access_token; the socket stays")
    func tokenRefresh() async throws {
        let transport = ScriptedTransport()
        let token = Locked("jwt-1")
        let session = try session(transport, token: token)
        var log = ScriptedLog(transport)
        try await withRunningSession(session) { status in
            #expect(await log.next() == .opened(Self.socketURL, subprotocols: []))
            try await status.waitFor(.connected)
            let subscribing = Task { try await session.subscribe(to: "room1") }
            let join = try #require(await log.nextSent())
            #expect(join.contains(#""access_token":"jwt-1""#) && join.hasPrefix(#"["1","1","realtime:room1","phx_join","#), "\(join)")
            transport.push(#"["1","1","realtime:room1","phx_reply",{"response":{"postgres_changes":[]},"status":"ok"}]"#)
            _ = try await subscribing.value
            token.withLock { $0 = "jwt-2" }
            await session.credentialsChanged()
            #expect(await log.nextSent() == #"["1","2","realtime:room1","access_token",{"access_token":"jwt-2"}]"#)
            #expect(transport.openCount == 1, "no reconnect for a token refresh")
            #expect(session.status == .connected)
        }
    }

    @Test("a private channel with replay: after a drop the rejoin asks from the last broadcast (less the margin), the report says caught up, and a repeated broadcast is dropped by its id")
    func replayAfterDrop() async throws {
        Self.wallClock.withLock { $0 = 1_800_000_000_000 }
        let transport = ScriptedTransport()
        let session = try session(transport, token: Locked("jwt"))
        var log = ScriptedLog(transport)
        var reports = session.recoveryReports.makeAsyncIterator()
        let room = Topic.supabase("room1", config: SupabaseChannelConfig(isPrivate: true, replayLimit: 10))
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            _ = await reports.next()
            let subscribing = Task { try await session.subscribe(to: room) }
            _ = await log.nextSent()
            transport.push(#"["1","1","realtime:room1","phx_reply",{"response":{},"status":"ok"}]"#)
            var messages = try await subscribing.value.makeAsyncIterator()
            Self.wallClock.withLock { $0 += 1_000 }
            transport.push(#"[null,null,"realtime:room1","broadcast",{"event":"msg","meta":{"id":"m1"},"payload":{"n":1},"type":"broadcast"}]"#)
            #expect(try await messages.next()?.data["payload"]?["meta"]?["id"] == "m1")

            await clock.advance(by: .seconds(30))
            _ = await log.nextSent()  // the keep-alive (25 s)
            transport.closeFromServer(nil)
            var skipped: [ScriptedTransport.Event] = []
            let rejoin = try #require(await log.nextSent(skipped: &skipped))
            #expect(rejoin.contains(#""replay":{"limit":10,"since":1799999941000}"#), "since the last broadcast less 60 s: \(rejoin)")
            let joinRef = try #require(PhoenixMessage.decode(.text(rejoin)).joinRef)
            transport.push(#"["\#(joinRef)","\#(joinRef)","realtime:room1","phx_reply",{"response":{},"status":"ok"}]"#)
            transport.push(#"["\#(joinRef)",null,"realtime:room1","broadcast",{"event":"msg","meta":{"id":"m1","replayed":true},"payload":{"n":1},"type":"broadcast"}]"#)
            transport.push(#"["\#(joinRef)",null,"realtime:room1","broadcast",{"event":"msg","meta":{"id":"m2","replayed":true},"payload":{"n":2},"type":"broadcast"}]"#)
            #expect(try await messages.next()?.data["payload"]?["meta"]?["id"] == "m2", "m1 came twice: dropped")
            let report = try #require(await reports.next())
            #expect(report.trigger == .reconnect)
            #expect(report.refetch.isEmpty && report.gaps.isEmpty && report.isComplete, "\(report)")
        }
    }
}

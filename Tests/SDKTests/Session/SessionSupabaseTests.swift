import ConnectionPolicy
import Foundation
@testable import SDK
import SDKTesting
import Testing

/// The session over Supabase Realtime, the test playing the server frame by frame on the test
/// clock (frames as `../shared/research/supabase-transcripts.md` shows them): a token refresh
/// without a reconnect, and what a recovery report says after a reconnect — refetch for a public
/// channel, caught up only where the replay covers everything, a gap only where it did not
/// reach back.
@Suite("Session: Supabase Realtime", .timeLimit(.minutes(1)))
struct SessionSupabaseTests {
    let clock = TestClock()
    /// The device's wall clock, per test (tests run in parallel).
    let wallClock = Locked<Int64>(1_800_000_000_000)
    static let socketURL = URL(string: "ws://127.0.0.1:9/realtime/v1/websocket?apikey=anon&vsn=2.0.0")!

    func session(_ transport: ScriptedTransport, token: Locked<String>, auto: Bool = true, asked: Locked<Int> = Locked(0)) throws -> Session {
        let wallClock = wallClock
        let adapter = PhoenixChannels(credentials: .none, supabase: .init(apiKey: "anon", now: { wallClock.withLock { $0 } }))
        let settings = try AppSettings.testing(auto: auto) { builder in
            builder.serverProtocol(.adapter(adapter, name: "supabase-realtime")).tokenProvider {
                asked.withLock { $0 += 1 }
                return token.withLock { $0 }
            }
        }
        return Session(settings: settings, transport: transport, clock: clock)
    }

    /// Subscribes to `topic` on the open socket, answering its join (join_ref and ref `ref`).
    static func join(_ topic: Topic, ref: String, _ session: Session, _ transport: ScriptedTransport, _ log: inout ScriptedLog) async throws -> Subscription.AsyncIterator {
        let subscribing = Task { try await session.subscribe(to: topic) }
        let join = try #require(await log.nextSent())
        #expect(join.hasPrefix(#"["\#(ref)","\#(ref)","realtime:\#(topic.name)","phx_join","#), "\(join)")
        transport.push(#"["\#(ref)","\#(ref)","realtime:\#(topic.name)","phx_reply",{"response":{"postgres_changes":[]},"status":"ok"}]"#)
        return try await subscribing.value.makeAsyncIterator()
    }

    /// The server drops the socket after it worked for 30 s (so the session reconnects at once)
    /// and the session rejoins: the rejoin's join_ref and frame.
    func dropAndRejoin(_ transport: ScriptedTransport, _ log: inout ScriptedLog) async throws -> (joinRef: String, frame: String) {
        await clock.advance(by: .seconds(30))
        #expect(await log.nextSent()?.contains(#""phoenix","heartbeat""#) == true, "the keep-alive")
        transport.closeFromServer(nil)
        var skipped: [ScriptedTransport.Event] = []
        let rejoin = try #require(await log.nextSent(skipped: &skipped))
        #expect(rejoin.contains(#""phx_join""#), "\(rejoin), after \(skipped)")
        return (try #require(PhoenixMessage.decode(.text(rejoin)).joinRef), rejoin)
    }

    @Test("a new token: credentialsChanged() pushes it to every joined channel as access_token; the socket stays")
    func tokenRefresh() async throws {
        let transport = ScriptedTransport()
        let token = Locked("jwt-1")
        let session = try session(transport, token: token)
        let log = ScriptedLog(transport)
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

    @Test("a public channel after a reconnect is named for refetch: nothing can bring what it missed (issue 34 §1)")
    func publicChannelRefetch() async throws {
        let transport = ScriptedTransport()
        let session = try session(transport, token: Locked("jwt"))
        var log = ScriptedLog(transport)
        let reports = PatientReader(session.recoveryReports)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            _ = await reports.next()
            var messages = try await Self.join(.supabase("auto"), ref: "1", session, transport, &log)
            transport.push(#"[null,null,"realtime:auto","broadcast",{"event":"msg","payload":{"n":1},"type":"broadcast"}]"#)
            _ = try await messages.next()
            let rejoin = try await dropAndRejoin(transport, &log)
            #expect(!rejoin.frame.contains("replay"))
            transport.push(#"["\#(rejoin.joinRef)","\#(rejoin.joinRef)","realtime:auto","phx_reply",{"response":{"postgres_changes":[]},"status":"ok"}]"#)
            let report = try #require(await reports.next())
            #expect(report.trigger == .reconnect)
            #expect(report.refetch == ["auto"] && report.channelsToRefetch == ["auto"] && !report.isComplete, "\(report)")
        }
    }

    /// A private channel with replay, joined, one broadcast (`m1`) delivered; then dropped and
    /// rejoined: the replay (`replayed` ids) and presence_state; returns the report and what the
    /// subscription got after the drop.
    func replayScenario(origin: SupabaseBroadcastOrigin, limit: Int = 10, replayed: [String]) async throws -> (RecoveryReport, [String]) {
        let transport = ScriptedTransport()
        let session = try session(transport, token: Locked("jwt"))
        var log = ScriptedLog(transport)
        let reports = PatientReader(session.recoveryReports)
        let room = Topic.supabase("room1", config: SupabaseChannelConfig(isPrivate: true, replayLimit: limit, broadcastOrigin: origin))
        var result: (RecoveryReport, [String])?
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            _ = await reports.next()
            var messages = try await Self.join(room, ref: "1", session, transport, &log)
            wallClock.withLock { $0 += 1_000 }
            transport.push(#"[null,null,"realtime:room1","broadcast",{"event":"msg","meta":{"id":"m1"},"payload":{"id":"m1","n":1},"type":"broadcast"}]"#)
            #expect(try await messages.next()?.data["payload"]?["meta"]?["id"] == "m1")

            let rejoin = try await dropAndRejoin(transport, &log)
            #expect(rejoin.frame.contains(#""replay":{"limit":\#(limit),"since":1799999941000}"#), "since the last broadcast less 60 s: \(rejoin.frame)")
            let ref = rejoin.joinRef
            transport.push(#"["\#(ref)","\#(ref)","realtime:room1","phx_reply",{"response":{"postgres_changes":[]},"status":"ok"}]"#)
            for id in replayed {
                transport.push(#"["\#(ref)",null,"realtime:room1","broadcast",{"event":"msg","meta":{"id":"\#(id)","replayed":true},"payload":{},"type":"broadcast"}]"#)
            }
            transport.push(#"["\#(ref)",null,"realtime:room1","presence_state",{}]"#)
            let report = try #require(await reports.next())
            var got: [String] = []
            while let message = try await messages.next() {
                let event = message.data["event"]?.stringValue ?? "?"
                got.append(event == "broadcast" ? message.data["payload"]?["meta"]?["id"]?.stringValue ?? "?" : event)
                if event == "presence" { break }
            }
            result = (report, got)
        }
        return try #require(result)
    }

    @Test("a database-only private channel whose replay reached back: caught up; the repeat dropped, what was missed delivered")
    func replayCaughtUp() async throws {
        let (report, got) = try await replayScenario(origin: .databaseOnly, replayed: ["x", "m1", "m2"])
        #expect(report.trigger == .reconnect)
        #expect(report.refetch.isEmpty && report.gaps.isEmpty && report.isComplete, "\(report)")
        #expect(got == ["x", "m2", "presence"], "x was stored before it went out live: new here, and no replay_gap (issue 34 §3)")
    }

    @Test("a private channel clients broadcast on: the replay's broadcasts are delivered, and the channel is named for refetch all the same (issue 34 §2)")
    func replayDoesNotCoverClients() async throws {
        let (report, got) = try await replayScenario(origin: .clientsAndDatabase, replayed: ["m1", "m2"])
        #expect(report.refetch == ["room1"] && report.gaps.isEmpty && !report.isComplete, "\(report)")
        #expect(got == ["m2", "presence"])
    }

    @Test("a replay cut at its limit: the channel is a gap in the report, and replay_gap comes before the replayed broadcasts")
    func replayCut() async throws {
        let (report, got) = try await replayScenario(origin: .databaseOnly, limit: 2, replayed: ["m8", "m9"])
        #expect(report.gaps == ["room1"] && !report.isComplete, "\(report)")
        #expect(got == ["replay_gap", "m8", "m9", "presence"])
    }
}

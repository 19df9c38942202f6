import ConnectionPolicy
import Foundation
@testable import SDK
import SDKTesting
import Testing

/// The whole session over the Phoenix adapter, the test playing the server frame by frame on the
/// test clock with the frames of `../shared/research/phoenix-transcripts.md` §6: the join, the
/// rejoin with a new `join_ref` after a drop (reported as refetch), a close 1000 that is not
/// final, stale frames dropped, presence across a reconnect, the keep-alive finding a silent
/// server, a 403 without a retry storm, Manual mode's `ping()`.
@Suite("Session: Phoenix", .timeLimit(.minutes(1)))
struct SessionPhoenixTests {
    let clock = TestClock()
    let lifecycle = LifecycleDriver()
    static let socketURL = URL(string: "ws://127.0.0.1:9/socket/websocket?vsn=2.0.0&token=test-token")!

    func session(_ transport: ScriptedTransport, auto: Bool = true, protocol serverProtocol: ServerProtocol = .phoenix()) throws -> Session {
        Session(settings: try .testing(auto: auto) { $0.serverProtocol(serverProtocol) }, transport: transport, clock: clock, lifecycle: lifecycle)
    }

    /// Runs `body` with an Auto session over Phoenix, connected (Phoenix is ready at open).
    func withConnectedSession(_ body: (Session, ScriptedTransport, inout ScriptedLog, StatusRecorder) async throws -> Void) async throws {
        let transport = ScriptedTransport()
        let session = try session(transport)
        var log = ScriptedLog(transport)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            try await body(session, transport, &log, status)
        }
    }

    /// Subscribes to `topic`, answering its join (join_ref and ref `ref`) as the server does.
    func join(_ topic: String, ref: String, _ session: Session, _ transport: ScriptedTransport, _ log: inout ScriptedLog) async throws -> Subscription.AsyncIterator {
        let subscribing = Task { try await session.subscribe(to: topic) }
        #expect(await log.nextSent() == #"["\#(ref)","\#(ref)","\#(topic)","phx_join",{}]"#)
        transport.push(#"["\#(ref)","\#(ref)","\#(topic)","phx_reply",{"response":{},"status":"ok"}]"#)
        return try await subscribing.value.makeAsyncIterator()
    }

    static func presence(_ members: [String: [String]]) -> JSONValue {
        ["event": "presence", "payload": .object(members.mapValues { refs in ["metas": .array(refs.map { ["phx_ref": .string($0)] })] })]
    }

    @Test("Auto: connected at open; join, presence, a broadcast, a push's reply; a close 1000 is retried and the rejoin, with a new join_ref, is reported as refetch")
    func autoJoinAndRejoin() async throws {
        let transport = ScriptedTransport()
        let session = try session(transport)
        let log = ScriptedLog(transport)
        let reports = PatientReader(session.recoveryReports)
        try await withRunningSession(session) { status in
            #expect(await log.next() == .opened(Self.socketURL, subprotocols: []))
            try await status.waitFor(.connected)
            _ = await reports.next()
            let subscribing = Task { try await session.subscribe(to: "room:lobby") }
            #expect(await log.nextSent() == #"["1","1","room:lobby","phx_join",{}]"#)
            transport.push(#"["1","1","room:lobby","phx_reply",{"response":{"topic":"room:lobby","user":"alice"},"status":"ok"}]"#)
            var messages = try await subscribing.value.makeAsyncIterator()
            transport.push(#"[null,null,"room:lobby","presence_diff",{"joins":{"alice":{"metas":[{"phx_ref":"A1"}]}},"leaves":{}}]"#)
            transport.push(#"["1",null,"room:lobby","presence_state",{"alice":{"metas":[{"phx_ref":"A1"}]}}]"#)
            #expect(try await messages.next()?.data == Self.presence(["alice": ["A1"]]))

            let publishing = Task { try await session.publish(["event": "new_msg", "payload": ["body": "hello"]], to: "room:lobby") }
            #expect(await log.nextSent() == #"["1","2","room:lobby","new_msg",{"body":"hello"}]"#)
            transport.push(#"[null,null,"room:lobby","new_msg",{"body":"hello","id":1,"user":"alice"}]"#)
            transport.push(#"["1","2","room:lobby","phx_reply",{"response":{"id":1},"status":"ok"}]"#)
            #expect(try await messages.next() == ChannelMessage(channel: "room:lobby", sequence: nil, data: ["event": "new_msg", "payload": ["body": "hello", "id": 1, "user": "alice"]]))
            #expect(try await publishing.value == PublishReceipt(.acknowledged, response: ["id": 1]))

            await clock.advance(by: .seconds(30))  // a working connection: its loss is retried at once
            #expect(await log.nextSent() == #"[null,"3","phoenix","heartbeat",{}]"#, "the keep-alive, every 30 s")
            transport.push(#"[null,"3","phoenix","phx_reply",{"response":{},"status":"ok"}]"#)
            transport.closeFromServer(.normal)  // Cowboy's idle timeout, or a kicked user: not final
            var skipped: [ScriptedTransport.Event] = []
            #expect(await log.nextSent(skipped: &skipped) == #"["4","4","room:lobby","phx_join",{}]"#, "a new join_ref on the new socket")
            #expect(skipped == [.closed(.normal), .opened(Self.socketURL, subprotocols: [])], "one socket at a time: \(skipped)")
            transport.push(#"["4","4","room:lobby","phx_reply",{"response":{},"status":"ok"}]"#)
            let report = try #require(await reports.next())
            #expect(report.trigger == .reconnect)
            #expect(report.refetch == ["room:lobby"], "Phoenix cannot resume: what was missed is unknown")
            #expect(report.caughtUp.isEmpty && report.gaps.isEmpty)
            transport.push(#"["1",null,"room:lobby","new_msg",{"stale":true}]"#)
            transport.push(#"["4",null,"room:lobby","new_msg",{"fresh":true}]"#)
            #expect(try await messages.next()?.data == ["event": "new_msg", "payload": ["fresh": true]], "the old join's frame was dropped")
        }
    }

    @Test("presence across a reconnect: the view stands until the new join's state; a diff that came before it applies on top, never alone")
    func presenceAcrossReconnect() async throws {
        try await withConnectedSession { (session: Session, transport: ScriptedTransport, log: inout ScriptedLog, status: StatusRecorder) async throws in
            var messages = try await join("room:r", ref: "1", session, transport, &log)
            transport.push(#"["1",null,"room:r","presence_state",{"judy":{"metas":[{"phx_ref":"J1"}]},"ivan":{"metas":[{"phx_ref":"I1"}]}}]"#)
            #expect(try await messages.next()?.data == Self.presence(["judy": ["J1"], "ivan": ["I1"]]))
            await clock.advance(by: .seconds(20))
            transport.closeFromServer(CloseCode(1012))  // SIGTERM's drain
            var skipped: [ScriptedTransport.Event] = []
            #expect(await log.nextSent(skipped: &skipped) == #"["2","2","room:r","phx_join",{}]"#)
            transport.push(#"["2","2","room:r","phx_reply",{"response":{},"status":"ok"}]"#)
            // The restarted server: judy is back with a new ref, ivan is gone; the diff first.
            transport.push(#"[null,null,"room:r","presence_diff",{"joins":{"judy":{"metas":[{"phx_ref":"J2"}]}},"leaves":{}}]"#)
            transport.push(#"["2",null,"room:r","presence_state",{"judy":{"metas":[{"phx_ref":"J2"}]}}]"#)
            transport.push(#"[null,null,"room:r","presence_diff",{"joins":{"kate":{"metas":[{"phx_ref":"K1"}]}},"leaves":{}}]"#)
            let views = [try await messages.next(), try await messages.next()].compactMap { $0.flatMap(PresenceView.init) }
            #expect(views.map(\.keys) == [["judy"], ["judy", "kate"]], "the new state whole (ivan gone, judy once), then kate")
        }
    }

    @Test("a crashed channel: phx_error reaches the app, the rejoin goes after 1 s with a new join_ref on the same socket, and the old join's frames are dropped")
    func crashedChannel() async throws {
        try await withConnectedSession { (session: Session, transport: ScriptedTransport, log: inout ScriptedLog, status: StatusRecorder) async throws in
            var messages = try await join("room:2", ref: "1", session, transport, &log)
            transport.push(#"["1","1","room:2","phx_error",{}]"#)
            #expect(try await messages.next()?.data == ["event": "phx_error", "payload": [:]])
            await clock.advance(by: .milliseconds(999))
            await clock.advance(by: .milliseconds(1))
            #expect(await log.nextSent() == #"["2","2","room:2","phx_join",{}]"#, "the rejoin, at 1 s")
            transport.push(#"["2","2","room:2","phx_reply",{"response":{},"status":"ok"}]"#)
            transport.push(#"["1",null,"room:2","news",{"n":1}]"#)
            transport.push(#"["2",null,"room:2","news",{"n":2}]"#)
            #expect(try await messages.next()?.data == ["event": "news", "payload": ["n": 2]])
            #expect(transport.openCount == 1, "the socket stayed")
        }
    }

    @Test("the keep-alive finds a silent server: a heartbeat unanswered by the next beat ends the connection, and the session reconnects")
    func silentServer() async throws {
        try await withConnectedSession { (session: Session, transport: ScriptedTransport, log: inout ScriptedLog, status: StatusRecorder) async throws in
            await clock.advance(by: .seconds(30))
            #expect(await log.nextSent() == #"[null,"1","phoenix","heartbeat",{}]"#)
            await clock.advance(by: .milliseconds(29_999))
            #expect(transport.openCount == 1)
            await clock.advance(by: .milliseconds(1))
            try await status.waitFor { $0.reason?.code == .networkLost }
            try await status.waitFor(.connected)
            #expect(transport.openCount == 2, "reconnected at once")
        }
    }

    /// Runs `body` with an Auto session over Phoenix, connected in Low Power Mode, with the
    /// number of frames it had sent by then.
    func withLowPowerSession(_ body: (ScriptedTransport, ScriptedLog, ConditionsDriver, Int) async throws -> Void) async throws {
        let transport = ScriptedTransport()
        let conditions = ConditionsDriver(DeviceConditions(isLowPowerModeEnabled: true))
        let session = Session(
            settings: try .testing { $0.serverProtocol(.phoenix()) }, transport: transport, clock: clock, lifecycle: lifecycle, conditions: conditions
        )
        let log = ScriptedLog(transport)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            try await body(transport, log, conditions, transport.sentCount)
        }
    }

    @Test("in Low Power Mode the Phoenix heartbeat is stretched (none at 30 s); out of it, armed again at 30 s from the change")
    func keepAliveFollowsConditions() async throws {
        try await withLowPowerSession { transport, log, conditions, sent in
            await clock.advance(by: .seconds(30))
            #expect(transport.sentCount == sent, "no heartbeat at 30 s in Low Power Mode")
            await conditions.lowPowerMode(false)
            await clock.advance(by: .milliseconds(29_999))
            #expect(transport.sentCount == sent)
            await clock.advance(by: .milliseconds(1))
            #expect(await log.nextSent() == #"[null,"1","phoenix","heartbeat",{}]"#)
        }
    }

    @Test("in Low Power Mode the Phoenix heartbeat goes at 50 s: ×2 of 30 s, bounded by Phoenix's 60 s")
    func keepAliveStretchedBounded() async throws {
        try await withLowPowerSession { transport, log, _, sent in
            await clock.advance(by: .milliseconds(49_999))
            #expect(transport.sentCount == sent)
            await clock.advance(by: .milliseconds(1))
            #expect(await log.nextSent() == #"[null,"1","phoenix","heartbeat",{}]"#)
        }
    }

    @Test("a 403 at the upgrade: disconnected, credentials rejected, with the three causes named; no second attempt however long")
    func forbidden() async throws {
        let refusal = TransportError(.handshakeFailed, "the server answered 403", httpStatus: 403)
        let transport = ScriptedTransport(refusals: [refusal, refusal, refusal])
        let session = try session(transport)
        try await withRunningSession(session) { status in
            try await status.waitFor { $0.reason?.code == .credentialsRejected }
            await clock.advance(by: .seconds(3600))
            #expect(transport.openCount == 1, "no retry storm")
            let reason = session.status.reason
            #expect(reason?.detail?.contains("missing token") == true && reason?.detail?.contains("vsn") == true)
            #expect(reason.map { String(describing: $0) }?.contains("test-token") == false, "the token is never shown")
        }
    }

    @Test("Manual: connect(), ping() is a Phoenix heartbeat answered by its reply, and the background watchdog disconnects at 30 s")
    func manual() async throws {
        let transport = ScriptedTransport()
        let session = try session(transport, auto: false)
        let log = ScriptedLog(transport)
        try await withRunningSession(session) { status in
            let connecting = Task { try await session.connect() }
            try await status.waitFor(.connected)
            try await connecting.value
            let pinging = Task { try await session.ping() }
            #expect(await log.nextSent() == #"[null,"1","phoenix","heartbeat",{}]"#)
            transport.push(#"[null,1,"phoenix","phx_reply",{"response":{},"status":"ok"}]"#)
            try await pinging.value
            await lifecycle.background()
            await clock.advance(by: .milliseconds(29_999))
            #expect(session.status == .connected)
            await clock.advance(by: .milliseconds(1))
            try await status.waitFor(.disconnected(.watchdogExpired))
        }
    }
}

import ConnectionPolicy
import Foundation
@testable import SDK
import SDKTesting
import Testing

/// The Phoenix clients' reported bugs (issue 29), each played on the test clock.
extension SessionPhoenixTests {
    @Test("SwiftPhoenixClient PR #117: a heartbeat unanswered when the socket went away does not time out the next socket")
    func staleHeartbeatRefAfterBackground() async throws {
        try await withConnectedSession { (session: Session, transport: ScriptedTransport, log: inout ScriptedLog, status: StatusRecorder) async throws in
            await clock.advance(by: .seconds(30))
            #expect(await log.nextSent() == #"[null,"1","phoenix","heartbeat",{}]"#, "sent; its reply never comes")
            await lifecycle.background()
            try await status.waitFor(.disconnected(.appBackgrounded))
            await lifecycle.foreground()
            try await status.waitFor(.connected)
            await clock.advance(by: .seconds(30))
            var skipped: [ScriptedTransport.Event] = []
            #expect(await log.nextSent(skipped: &skipped) == #"[null,"2","phoenix","heartbeat",{}]"#, "the new socket's first beat: a heartbeat, not a timeout")
            #expect(session.status == .connected && transport.openCount == 2)
        }
    }

    @Test("SwiftPhoenixClient #176: after two outages in a row, each new socket joins the channel once, and it works")
    func twoOutages() async throws {
        try await withConnectedSession { (session: Session, transport: ScriptedTransport, log: inout ScriptedLog, status: StatusRecorder) async throws in
            var messages = try await join("room:r", ref: "1", session, transport, &log)
            for (outage, ref) in [(1, "2"), (2, "3")] {
                await clock.advance(by: .seconds(20))
                transport.closeFromServer(nil)
                var skipped: [ScriptedTransport.Event] = []
                #expect(await log.nextSent(skipped: &skipped) == #"["\#(ref)","\#(ref)","room:r","phx_join",{}]"#, "outage \(outage): one join")
                transport.push(#"["\#(ref)","\#(ref)","room:r","phx_reply",{"response":{},"status":"ok"}]"#)
            }
            transport.push(#"["3",null,"room:r","news",{"n":1}]"#)
            #expect(try await messages.next()?.data == ["event": "news", "payload": ["n": 1]])
            await clock.advance(by: .seconds(30))
            #expect(await log.nextSent() == #"[null,"4","phoenix","heartbeat",{}]"#, "the keep-alive, and no further join before it: nothing loops")
        }
    }

    @Test("supabase-swift #612: after the app's disconnect(), a server close of the old socket brings no reconnect, however long")
    func noReconnectAfterDisconnect() async throws {
        let transport = ScriptedTransport()
        let session = try session(transport, auto: false)
        try await withRunningSession(session) { status in
            try await session.connect()
            await session.disconnect()
            try await status.waitFor(.disconnected(.appRequested))
            transport.closeFromServer(.normal)
            await clock.advance(by: .seconds(3600))
            #expect(transport.openCount == 1 && session.status == .disconnected(.appRequested))
        }
    }

    @Test("the token in the socket's URL never reaches a log line, a status or an error, the 403's included")
    func tokenRedacted() async throws {
        let lines = Locked([String]())
        let refusal = TransportError(.handshakeFailed, "ws://127.0.0.1:9/socket/websocket?vsn=2.0.0&token=test-token answered 403", httpStatus: 403)
        let transport = ScriptedTransport(refusals: [refusal])
        let settings = try AppSettings.testing { $0.serverProtocol(.phoenix()).logging(minimumLevel: .debug) { record in lines.withLock { $0.append(record.message) } } }
        let session = Session(settings: settings, transport: transport, clock: clock)
        try await withRunningSession(session) { status in
            try await status.waitFor { $0.reason?.code == .credentialsRejected }
            let logged = lines.withLock { $0 }
            #expect(logged.contains { $0.contains("token=<redacted>") }, "the URL is logged, redacted: \(logged)")
            #expect(!logged.contains { $0.contains("test-token") })
            #expect(!String(describing: session.status).contains("test-token"))
        }
    }
}

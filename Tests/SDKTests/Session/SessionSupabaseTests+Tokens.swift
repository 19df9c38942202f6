import ConnectionPolicy
import Foundation
@testable import SDK
import SDKTesting
import Testing

/// Tokens that outlive their first hour and refusals that lift (issue 34 §5, §6), through the
/// session: the token provider is asked ahead of a JWT's expiry and when the server closes a
/// channel for an expired token; Supabase's 403 is retried a few times before it is final.
extension SessionSupabaseTests {
    @Test("a channel closed for an expired token (§6 tok2) makes the session ask the token provider and rejoin with its token; the subscription goes on")
    func expiredTokenRejoins() async throws {
        let transport = ScriptedTransport()
        let token = Locked("opaque-1")
        let asked = Locked(0)
        let session = try session(transport, token: token, asked: asked)
        var log = ScriptedLog(transport)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            var messages = try await Self.join(.supabase("tok2"), ref: "1", session, transport, &log)
            let before = asked.withLock { $0 }
            token.withLock { $0 = "opaque-2" }
            transport.push(#"["1",null,"realtime:tok2","system",{"channel":"tok2","extension":"system","message":"Token has expired 0 seconds ago","status":"error"}]"#)
            transport.push(#"["1","1","realtime:tok2","phx_close",{}]"#)
            #expect(try await messages.next()?.data["payload"]?["message"] == "Token has expired 0 seconds ago")
            let rejoin = try #require(await log.nextSent())
            #expect(rejoin.hasPrefix(#"["2","2","realtime:tok2","phx_join","#) && rejoin.contains(#""access_token":"opaque-2""#), "\(rejoin)")
            #expect(asked.withLock { $0 } == before + 1)
            transport.push(#"["2","2","realtime:tok2","phx_reply",{"response":{"postgres_changes":[]},"status":"ok"}]"#)
            transport.push(#"[null,null,"realtime:tok2","broadcast",{"event":"m","payload":{"n":1},"type":"broadcast"}]"#)
            #expect(try await messages.next()?.data["payload"]?["payload"]?["n"] == 1)
            #expect(transport.openCount == 1 && session.status == .connected)
        }
    }

    @Test("a JWT is refreshed ahead: the provider is asked halfway to an exp less than two minutes away, and its token pushed in band")
    func refreshAhead() async throws {
        let transport = ScriptedTransport()
        let now = wallClock.withLock { $0 } / 1000
        let token = Locked(SupabaseMachineTests.jwt(exp: now + 100))
        let asked = Locked(0)
        let session = try session(transport, token: token, asked: asked)
        var log = ScriptedLog(transport)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await Self.join(.supabase("room1"), ref: "1", session, transport, &log)
            let fresh = SupabaseMachineTests.jwt(exp: now + 3700)
            token.withLock { $0 = fresh }
            let before = asked.withLock { $0 }
            await clock.advance(by: .seconds(50))
            var frames: [String] = []
            while let frame = await log.nextSent() {
                if frame.contains("access_token") && !frame.contains("phx_join") { frames.append(frame); break }
            }
            #expect(frames == [#"["1","3","realtime:room1","access_token",{"access_token":"\#(fresh)"}]"#])
            #expect(asked.withLock { $0 } == before + 1)
            #expect(transport.openCount == 1)
            _ = room
        }
    }

    @Test("Supabase's 403 (also its joins-per-second limit): retried after 1, 2 and 4 s, then final; no storm after")
    func refusedUpgradeRetried() async throws {
        let refusal = TransportError(.handshakeFailed, "the server answered 403", httpStatus: 403)
        let transport = ScriptedTransport(refusals: Array(repeating: refusal, count: 6))
        let session = try session(transport, token: Locked("jwt"))
        let log = ScriptedLog(transport)
        try await withRunningSession(session) { status in
            for attempt in 1...4 {
                #expect(await log.next() == .opened(Self.socketURL, subprotocols: []), "attempt \(attempt)")
                guard attempt < 4 else { break }
                // Refused and read: the retry is armed.
                try await status.waitFor { $0.reason?.detail?.contains("(\(attempt) of 4 in a row)") == true }
                await clock.advance(by: .seconds(5))
            }
            try await status.waitFor { $0.reason?.code == .credentialsRejected }
            await clock.advance(by: .seconds(3600))
            #expect(transport.openCount == 4, "four attempts, then no more")
        }
    }
}

import ConnectionPolicy
import Foundation
@testable import SDK
import SDKTesting
import Testing

/// `track`/`untrack` through the session (issue 34 §4): the state is announced again on every
/// rejoin, before what the app publishes there, and an untrack is not undone by a rejoin.
extension SessionSupabaseTests {
    /// The frames sent before a heartbeat that `ping()` asks for now.
    static func framesUntilHeartbeat(_ session: Session, _ log: inout ScriptedLog) async throws -> [String] {
        let pinging = Task { try await session.ping() }
        defer { pinging.cancel() }
        var frames: [String] = []
        while let frame = await log.nextSent(), !frame.contains(#""phoenix","heartbeat""#) { frames.append(frame) }
        return frames
    }

    /// The next join sent (the goodbye's `phx_leave` of a `disconnect()` comes before).
    static func nextJoin(_ log: inout ScriptedLog) async -> String? {
        while let frame = await log.nextSent() {
            if frame.contains(#""phx_join""#) { return frame }
            #expect(frame.contains(#""phx_leave""#), "\(frame)")
        }
        return nil
    }

    @Test("track is announced again after a reconnect, ahead of the outbox; untrack while away is not undone by the rejoin")
    func trackAcrossReconnects() async throws {
        let transport = ScriptedTransport()
        let session = try session(transport, token: Locked("jwt"), auto: false)
        var log = ScriptedLog(transport)
        try await withRunningSession(session) { status in
            try await session.connect()
            let lobby = try await Self.join(.supabase("lobby", config: SupabaseChannelConfig(presenceKey: "alice")), ref: "1", session, transport, &log)
            let tracking = Task { try await session.track(["status": "online"], on: "lobby") }
            #expect(await log.nextSent() == #"["1","2","realtime:lobby","presence",{"event":"track","payload":{"status":"online"},"type":"presence"}]"#)
            transport.push(#"["1","2","realtime:lobby","phx_reply",{"response":{},"status":"ok"}]"#)
            try await tracking.value

            await session.disconnect()
            try await status.waitFor { if case .disconnected = $0 { true } else { false } }
            let publishing = Task { try await session.publish(["event": "msg", "payload": ["n": 1]], to: "lobby") }
            for await count in session.outboxCountUpdates where count == 1 { break }
            let connecting = Task { try await session.connect() }
            let rejoin = try #require(await Self.nextJoin(&log))
            let ref = try #require(PhoenixMessage.decode(.text(rejoin)).joinRef)
            transport.push(#"["\#(ref)","\#(ref)","realtime:lobby","phx_reply",{"response":{"postgres_changes":[]},"status":"ok"}]"#)
            try await connecting.value
            #expect(try await publishing.value.confirmation == .sentUnconfirmed)
            // Everything the rejoin sent, up to a heartbeat asked for now (so a missing frame
            // fails here rather than waiting for it).
            let sent = try await Self.framesUntilHeartbeat(session, &log)
            #expect(sent.count == 2, "\(sent)")
            #expect(sent.first?.contains(#""presence",{"event":"track","payload":{"status":"online"}"#) == true && sent.first?.hasPrefix(#"["\#(ref)","#) == true,
                    "tracked again, with the new join_ref, first: \(sent)")
            #expect(sent.last?.contains(#""broadcast",{"event":"msg""#) == true, "the outbox after the announcement: \(sent)")

            await session.disconnect()
            try await status.waitFor { if case .disconnected = $0 { true } else { false } }
            try await session.untrack(on: "lobby")
            let again = Task { try await session.connect() }
            let third = try #require(await Self.nextJoin(&log))
            let ref3 = try #require(PhoenixMessage.decode(.text(third)).joinRef)
            transport.push(#"["\#(ref3)","\#(ref3)","realtime:lobby","phx_reply",{"response":{"postgres_changes":[]},"status":"ok"}]"#)
            try await again.value
            #expect(try await Self.framesUntilHeartbeat(session, &log).isEmpty, "untracked: nothing announced with the rejoin")
            _ = lobby
        }
    }

    @Test("track while the channel's rejoin is on its way goes out right behind the join, and returns with its reply")
    func trackWhileRejoining() async throws {
        let transport = ScriptedTransport()
        let session = try session(transport, token: Locked("jwt"), auto: false)
        var log = ScriptedLog(transport)
        try await withRunningSession(session) { status in
            try await session.connect()
            let lobby = try await Self.join(.supabase("lobby"), ref: "1", session, transport, &log)
            await session.disconnect()
            try await status.waitFor { if case .disconnected = $0 { true } else { false } }
            try await session.connect()
            let rejoin = try #require(await Self.nextJoin(&log))
            let ref = try #require(PhoenixMessage.decode(.text(rejoin)).joinRef)
            let tracking = Task { try await session.track(["status": "online"], on: "lobby") }
            let track = try #require(await log.nextSent())
            #expect(track.hasPrefix(#"["\#(ref)","#) && track.contains(#""presence",{"event":"track""#), "before the join's reply: \(track)")
            let trackRef = try #require(PhoenixMessage.decode(.text(track)).ref)
            transport.push(#"["\#(ref)","\#(ref)","realtime:lobby","phx_reply",{"response":{"postgres_changes":[]},"status":"ok"}]"#)
            transport.push(#"["\#(ref)","\#(trackRef)","realtime:lobby","phx_reply",{"response":{},"status":"ok"}]"#)
            try await tracking.value
            _ = lobby
        }
    }

    @Test("track refuses a channel not subscribed, and a protocol without presence, with a typed error")
    func trackRefused() async throws {
        let session = try session(ScriptedTransport(), token: Locked("jwt"), auto: false)
        await #expect(throws: SessionError.self) { try await session.track([:], on: "nowhere") }
        do {
            try await session.track([:], on: "nowhere")
        } catch let error as SessionError {
            #expect(error.code == .invalidArgument && error.message.contains("not subscribed to nowhere"))
        }
        let phoenix = Session(settings: try .testing(auto: false) { $0.serverProtocol(.phoenix()) }, transport: ScriptedTransport(), clock: clock)
        _ = try await phoenix.subscribe(to: "room:lobby")
        do {
            try await phoenix.track([:], on: "room:lobby")
            Issue.record("plain Phoenix has no client presence to track")
        } catch let error as SessionError {
            #expect(error.code == .invalidArgument && error.message.contains("no presence"))
        }
        await session.shutdown()
        await phoenix.shutdown()
    }
}

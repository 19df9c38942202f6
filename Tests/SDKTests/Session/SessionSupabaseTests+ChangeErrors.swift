import Foundation
@testable import SDK
import SDKTesting
import Testing

extension SessionSupabaseTests {
    /// The error a real supabase/realtime v2.52.1 sends for a binding on a table that does not
    /// exist, on the channel's current join (`../shared/research/supabase-transcripts.md`, bob).
    static func changeError(joinRef: String) -> String {
        #"["\#(joinRef)",null,"realtime:badtable","system",{"channel":"badtable","extension":"postgres_changes","message":"{:error, \"Unable to subscribe to changes with given parameters. Please check Realtime is enabled for the given connect parameters: [event: *, schema: public, table: no_such_table]\"}","status":"error"}]"#
    }

    @Test("a postgres_changes error the server repeats while the channel stays joined (five times in 25 s, as the real server did) reaches the app once per join; a rejoin's comes again, once")
    func changeErrorOncePerJoin() async throws {
        let transport = ScriptedTransport()
        let session = try session(transport, token: Locked("jwt"))
        var log = ScriptedLog(transport)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let topic = Topic.supabase("badtable", config: SupabaseChannelConfig(postgresChanges: [PostgresChangeFilter(event: "*", table: "no_such_table")]))
            var messages = try await Self.join(topic, ref: "1", session, transport, &log)
            for _ in 1...5 { transport.push(Self.changeError(joinRef: "1")) }
            transport.push(#"[null,null,"realtime:badtable","broadcast",{"event":"marker","payload":{},"type":"broadcast"}]"#)
            let first = try await messages.next()
            #expect(first?.data["event"] == "system" && first?.data["payload"]?["status"] == "error", "the error, delivered: \(String(describing: first))")
            #expect(try await messages.next()?.data["payload"]?["event"] == "marker", "its four repeats are not: they say nothing new")

            let rejoin = try await dropAndRejoin(transport, &log)
            transport.push(#"["\#(rejoin.joinRef)","\#(rejoin.joinRef)","realtime:badtable","phx_reply",{"response":{"postgres_changes":[]},"status":"ok"}]"#)
            for _ in 1...2 { transport.push(Self.changeError(joinRef: rejoin.joinRef)) }
            transport.push(#"[null,null,"realtime:badtable","broadcast",{"event":"marker","payload":{},"type":"broadcast"}]"#)
            let again = try await messages.next()
            #expect(again?.data["event"] == "system" && again?.data["payload"]?["status"] == "error", "a new join's error is delivered: \(String(describing: again))")
            #expect(try await messages.next()?.data["payload"]?["event"] == "marker")
        }
    }
}

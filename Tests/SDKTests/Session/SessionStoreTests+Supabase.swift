import ConnectionPolicy
import Foundation
@testable import SDK
import SDKTesting
import Testing

extension SessionStoreTests {
    /// A launch on Supabase Realtime with `store`, its wall clock read from `wallClock`.
    func supabaseLaunch(_ transport: ScriptedTransport, _ store: InMemorySessionStore, wallClock: Locked<Int64>) throws -> Session {
        let adapter = PhoenixChannels(credentials: .none, supabase: .init(apiKey: "anon", now: { wallClock.withLock { $0 } }))
        let settings = try AppSettings.testing { $0.serverProtocol(.adapter(adapter, name: "supabase-realtime")).tokenProvider { "jwt" }.store(store) }
        return Session(settings: settings, transport: transport, clock: clock)
    }

    @Test("Supabase private channel across a kill: a broadcast the app was handed and had not finished comes again in the relaunch's replay, flagged; one it finished does not")
    func supabaseReplayAcrossKill() async throws {
        let wallClock = Locked<Int64>(1_800_000_000_000)
        let topic = Topic.supabase("room1", config: SupabaseChannelConfig(isPrivate: true, replayLimit: 25, broadcastOrigin: .databaseOnly))
        let live = { (id: String) in #"[null,null,"realtime:room1","broadcast",{"event":"tick","meta":{"id":"\#(id)"},"payload":{"id":"\#(id)"},"type":"broadcast"}]"# }
        let replayed = { (ref: String, id: String) in #"["\#(ref)",null,"realtime:room1","broadcast",{"event":"tick","meta":{"id":"\#(id)","replayed":true},"payload":{},"type":"broadcast"}]"# }
        let store = InMemorySessionStore()
        let transport = ScriptedTransport()
        let first = try supabaseLaunch(transport, store, wallClock: wallClock)
        var log = ScriptedLog(transport)
        try await withRunningSession(first) { status in
            try await status.waitFor(.connected)
            var messages = try await SessionSupabaseTests.join(topic, ref: "1", first, transport, &log)
            wallClock.withLock { $0 += 100 }
            transport.push(live("finished"))
            #expect(try await messages.next()?.data["payload"]?["meta"]?["id"] == "finished")
            wallClock.withLock { $0 += 100 }
            transport.push(live("handed"))
            #expect(try await messages.next()?.data["payload"]?["meta"]?["id"] == "handed", "asking for it finished the one before")
            await clock.settle()
            store.kill()
        }
        wallClock.withLock { $0 += 60_000 }
        let again = ScriptedTransport()
        let second = try supabaseLaunch(again, store.relaunched(), wallClock: wallClock)
        let relaunchLog = ScriptedLog(again)
        try await withRunningSession(second) { status in
            try await status.waitFor(.connected)
            let subscribing = Task { try await second.subscribe(to: topic) }
            let join = try #require(await relaunchLog.nextSent())
            #expect(join.contains(#""replay":{"#), "a replay from the stored position: \(join)")
            // The ref counter goes on from the stored session.
            let ref = try #require(PhoenixMessage.decode(.text(join)).joinRef)
            again.push(#"["\#(ref)","\#(ref)","realtime:room1","phx_reply",{"response":{"postgres_changes":[]},"status":"ok"}]"#)
            for id in ["finished", "handed", "missed"] { again.push(replayed(ref, id)) }
            again.push(#"["\#(ref)",null,"realtime:room1","presence_state",{}]"#)
            let messages = PatientReader(messagesOf: try await subscribing.value)
            let first = await messages.next()
            #expect(first?.data["payload"]?["meta"]?["id"] == "handed" && first?.isRedelivery == true, "not finished: again, flagged")
            let next = await messages.next()
            #expect(next?.data["payload"]?["meta"]?["id"] == "missed" && next?.isRedelivery == false)
        }
    }
}

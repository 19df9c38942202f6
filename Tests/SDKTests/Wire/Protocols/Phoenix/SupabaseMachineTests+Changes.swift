import ConnectionPolicy
@testable import SDK
import Testing

/// `postgres_changes` as the real server sends them (supabase-transcripts.md §5, fact 8): the
/// server filters rows, not events, so the client delivers to each binding only what it asked
/// for; errors the server repeats every few seconds are said once.
extension SupabaseMachineTests {
    static func change(_ topic: String, _ type: String, ids: [Int64]) -> TransportFrame {
        let ids = ids.map(String.init).joined(separator: ",")
        return .text(#"[null,null,"realtime:\#(topic)","postgres_changes",{"data":{"columns":[{"name":"id","type":"int8"}],"commit_timestamp":"2026-11-25T22:06:06.261Z","errors":null,"record":{"id":48},"schema":"public","table":"tether_todos","type":"\#(type)"},"ids":[\#(ids)]}]"#)
    }

    static func joined(_ topic: String, reply: String) -> PhoenixChannels.Machine {
        var machine = Self.machine()
        expectKinds(machine.perform(.subscribe(1, .supabase(topic), resume: nil)), [.send])
        expectKinds(machine.receive(.text(#"["1","1","realtime:\#(topic)","phx_reply",{"response":\#(reply),"status":"ok"}]"#)), [.subscribed])
        return machine
    }

    @Test("an INSERT binding gets INSERTs only; UPDATE+DELETE bindings get those, not INSERTs; '*' gets all; ids of no binding of this join are dropped (alice, §5)")
    func deliveredByBindingAndEvent() {
        var db = Self.joined("db", reply: #"{"postgres_changes":[{"id":103533192,"event":"INSERT","filter":"owner=eq.X","schema":"public","table":"tether_todos"}]}"#)
        #expect(db.receive(Self.change("db", "INSERT", ids: [103533192])).count == 1)
        #expect(db.receive(Self.change("db", "UPDATE", ids: [103533192])).isEmpty, "the server sends the UPDATE to an INSERT binding")
        #expect(db.receive(Self.change("db", "INSERT", ids: [42])).isEmpty)
        var db3 = Self.joined("db3", reply: #"{"postgres_changes":[{"id":105553834,"event":"UPDATE","schema":"public","table":"tether_todos"},{"id":121090294,"event":"DELETE","schema":"public","table":"tether_todos"}]}"#)
        #expect(db3.receive(Self.change("db3", "INSERT", ids: [121090294, 105553834])).isEmpty)
        #expect(db3.receive(Self.change("db3", "UPDATE", ids: [121090294, 105553834])).count == 1)
        #expect(db3.receive(Self.change("db3", "DELETE", ids: [121090294, 105553834])).count == 1)
        var db2 = Self.joined("db2", reply: #"{"postgres_changes":[{"id":91048710,"event":"*","filter":"owner=eq.X","schema":"public","table":"tether_todos"}]}"#)
        for type in ["INSERT", "UPDATE", "DELETE"] { #expect(db2.receive(Self.change("db2", type, ids: [91048710])).count == 1) }
        var unnamed = Self.joined("old", reply: #"{}"#)
        #expect(unnamed.receive(Self.change("old", "UPDATE", ids: [1])).count == 1, "a reply that names no bindings: every change is delivered")
    }

    @Test("a postgres_changes error, repeated every few seconds while the channel stays joined, is delivered once per message (bob, §5)")
    func errorsOnce() {
        var machine = Self.joined("badtable", reply: #"{"postgres_changes":[{"id":10368730,"event":"*","schema":"public","table":"no_such_table"}]}"#)
        let error = #"["1",null,"realtime:badtable","system",{"channel":"badtable","extension":"postgres_changes","message":"{:error, \"Unable to subscribe to changes with given parameters.\"}","status":"error"}]"#
        #expect(machine.receive(.text(error)).count == 1)
        #expect(machine.receive(.text(error)).isEmpty)
        let other = #"["1",null,"realtime:badtable","system",{"channel":"badtable","extension":"postgres_changes","message":"another cause","status":"error"}]"#
        #expect(machine.receive(.text(other)).count == 1)
        #expect(machine.receive(.text(#"["1","1","realtime:badtable","phx_close",{}]"#))
            == [.cancel(WireTimer("phoenix-rejoin-realtime:badtable")), .subscriptionEnded(1, reason: "the server closed the channel (phx_close)")],
                "a database error is not the channel's: a later close is not read as one")
    }
}

import Foundation
import SDK
import SDKTesting
import Testing

/// The test double of a store: killed as a crash would kill the app, relaunched on what survived.
@Suite("InMemorySessionStore: kill and relaunch")
struct InMemorySessionStoreTests {
    private func data(_ text: String) -> Data { Data(text.utf8) }

    @Test("what an append that returned kept survives a kill; the killed handle writes nothing more, and fails")
    func killAndRelaunch() throws {
        let store = InMemorySessionStore()
        #expect(try store.load().records.isEmpty)
        try store.append([data("a"), data("b")])
        store.kill()
        #expect(throws: SessionStoreError.self, "a dead process writes nothing") { try store.append([data("late")]) }
        let next = store.relaunched()
        #expect(try next.load().records == [data("a"), data("b")])
        try next.replace(with: [data("c")])
        #expect(next.records == [data("c")])
        #expect(store.writeCounts.appends == 1 && store.writeCounts.replaces == 1, "counted across handles: \(store.writeCounts)")
    }

    @Test("one open handle at a time; writes before a load are refused; a failing disk and an unreadable store are typed")
    func faults() throws {
        let store = InMemorySessionStore(records: [Data("kept".utf8)])
        let other = store.relaunched()
        #expect(throws: SessionStoreError.self, "not loaded") { try store.append([data("x")]) }
        _ = try store.load()
        #expect((#expect(throws: SessionStoreError.self) { try other.load() })?.code == .inUse)
        store.failWrites(with: SessionStoreError(.diskFull, "full"))
        #expect((#expect(throws: SessionStoreError.self) { try store.append([data("x")]) })?.code == .diskFull)
        store.failWrites(with: nil)
        try store.append([data("y")])
        store.close()
        other.failReads(with: SessionStoreError(.notReadableYet, "before the first unlock"))
        #expect((#expect(throws: SessionStoreError.self) { try other.load() })?.code == .notReadableYet)
        other.failReads(with: nil)
        #expect(try other.load().records == [data("kept"), data("y")])
    }
}

/// The doc comment's example of ``InMemorySessionStore``, as written there: a host app's test in
/// ten lines.
@Test("a host app's test: publish offline, kill, relaunch: the relaunch sends it, once")
func outboxOutlivesTheProcess() async throws {
    let (server, store, lifecycle, clock) = (TestServer(), InMemorySessionStore(), LifecycleDriver(), TestClock())
    let app = Session(settings: try .testing { $0.store(store) }, transport: server.transport(), clock: clock, lifecycle: lifecycle)
    try await withRunningSession(app) { _ in
        await lifecycle.background()                              // Auto mode: offline
        Task { try await app.publish("sent offline", to: "room") }
        for await count in app.outboxCountUpdates where count == 1 { break }
        await clock.settle()                                      // the store's write is done
        store.kill()                                              // the process dies here
    }
    let relaunched = Session(settings: try .testing { $0.store(store.relaunched()) }, transport: server.transport(), clock: clock)
    try await withRunningSession(relaunched) { status in
        try await status.waitFor(.connected)
        await clock.settle()
    }
    #expect(server.latestSequence(of: "room") == 1)              // sent once, by the relaunch
}

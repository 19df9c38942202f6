import Foundation
@testable import SDK
import SDKTesting
import Testing

/// The Durability article's promises that a relaunch depends on, each pinned by a test that fails
/// when the promise is false (docs/MUTANTS.md lists each sentence beside its test).
extension SessionStoreTests {
    @Test("a message handed to the app and not finished when the socket drops is still unfinished after the resubscribe: a kill then brings it again, flagged")
    func unfinishedAcrossAReconnect() async throws {
        let server = TestServer()
        let store = InMemorySessionStore()
        let first = try launch(server, store)
        try await withRunningSession(first) { status in
            try await status.waitFor(.connected)
            let room = try await first.subscribe(to: "room")
            _ = try server.publish("finished", to: "room")
            _ = try server.publish("handed", to: "room")
            var messages = room.makeAsyncIterator()
            #expect(try await messages.next()?.data == "finished")
            #expect(try await messages.next()?.data == "handed", "handed over; the app has not asked past it")
            let mark = status.mark()
            server.dropAllConnections()
            try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
            await clock.advance(by: .seconds(1))  // the retry's delay
            try await status.waitFor(.connected, after: mark)
            await clock.settle()
            #expect(server.subscriberCount(of: "room") == 1, "resubscribed")
            store.kill()
            _ = messages
        }
        _ = try server.publish("next", to: "room")
        let second = try launch(server, store.relaunched())
        try await withRunningSession(second) { status in
            let room = try await second.subscribe(to: "room")
            try await status.waitFor(.connected)
            let messages = PatientReader(messagesOf: room)
            let again = await messages.next()
            #expect(again?.data == "handed" && again?.isRedelivery == true, "not finished before the kill: again, flagged (got \(String(describing: again)))")
            if again?.data == "handed" { #expect(await messages.next()?.data == "next", "then what came after") }
        }
    }

    @Test("a publish still waiting when the session shuts down during a store write, made while that write ran, stays in the store: the next launch sends it")
    func shutdownDuringAWriteKeepsWhatCameMeanwhile() async throws {
        let server = TestServer()
        let kept = InMemorySessionStore()
        let store = HeldAppendStore(kept)
        let manual = { (store: any SessionStore) in try AppSettings.testing(auto: false) { $0.store(store) } }
        let first = Session(settings: try manual(store), transport: server.transport(), clock: clock)
        try await withRunningSession(first) { _ in
            await clock.settle()
            store.holdNextAppend()
            let inFlight = Task { try await first.publish("in flight", to: "room") }
            try await first.waitForOutboxCount(1)
            // The write of "in flight" is held: this one's record waits for the next write.
            let meanwhile = Task { try await first.publish("made meanwhile", to: "room") }
            try await first.waitForOutboxCount(2)
            // Let the held write go once the shutdown has failed the calls (and so handed the
            // writer what was pending, in the same step).
            Task {
                _ = try? await meanwhile.value
                store.release()
            }
            _ = inFlight
        }
        #expect(!store.timedOut, "the held write was let go by the shutdown")
        let second = Session(settings: try manual(kept.relaunched()), transport: server.transport(), clock: clock)
        try await withRunningSession(second) { _ in
            await clock.settle()  // started: the store read
            #expect(await second.earlierPublishes.map(\.data) == ["in flight", "made meanwhile"], "both in the store, in order")
            try await second.connect()
            await clock.settle()
            #expect(server.latestSequence(of: "room") == 2, "the relaunch sent both")
        }
    }

    @Test("a publish that went on the wire before the kill may have been applied: the relaunch refuses to withdraw it, and sends it again with its key, applied once")
    func sentEarlierPublishIsNotWithdrawn() async throws {
        let server = TestServer()
        let store = InMemorySessionStore()
        let first = try launch(server, store)
        try await withRunningSession(first) { status in
            try await status.waitFor(.connected)
            server.loseNextPublishAcknowledgement()
            _ = Task { try await first.publish("applied", to: "room") }
            await clock.settle()
            #expect(server.latestSequence(of: "room") == 1, "the server applied it; its acknowledgement was lost")
            store.kill()
        }
        let second = Session(settings: try .testing(auto: false) { $0.store(store.relaunched()) }, transport: server.transport(), clock: clock)
        try await withRunningSession(second) { _ in
            let outcomes = PatientReader(second.earlierPublishOutcomes)
            await clock.settle()  // started: the store read
            let earlier = await second.earlierPublishes
            #expect(earlier.map(\.state) == [.waiting], "keys: waiting to be sent again")
            let id = try #require(earlier.first?.id)
            let refused = await #expect(throws: SessionError.self) { try await second.dismissPublish(id) }
            #expect(refused?.code == .invalidArgument && refused?.message.contains("on the wire") == true, "\(String(describing: refused))")
            try await second.connect()
            let outcome = try #require(await outcomes.next())
            #expect(outcome.state == .acknowledged(PublishReceipt(.acknowledged, sequence: 1)), "the server's de-duplication: the first application")
            #expect(server.latestSequence(of: "room") == 1, "applied once")
        }
    }

    @Test("outboxTimeout is wall-clock time from when a publish was made, across launches: a relaunch does not start its deadline again")
    func outboxTimeoutCountsAcrossLaunches() async throws {
        // A publish an earlier launch made 50 s ago (wall clock), never sent.
        let madeAt = Session.wallClockMilliseconds() - 50_000
        let old = StoreRecord.publish(StoredPublishRecord(key: "k-old", channel: "room", json: #""old""#, createdAt: madeAt))
        let store = InMemorySessionStore(records: [old.encoded()])
        let session = Session(settings: try .testing(auto: false) { $0.store(store).outboxTimeout(.seconds(60)) }, transport: TestServer().transport(), clock: clock)
        try await withRunningSession(session) { _ in
            await clock.settle()  // started: the store read
            #expect(await session.earlierPublishes.map(\.state) == [.waiting])
            await clock.advance(by: .seconds(5))
            #expect(await session.earlierPublishes.map(\.state) == [.waiting], "55 s old: still inside its 60 s")
            await clock.advance(by: .seconds(5))
            let state = await session.earlierPublishes.first?.state
            guard case .failed(let error)? = state else {
                Issue.record("60 s after it was made it timed out, not 60 s after this launch: \(String(describing: state))")
                return
            }
            #expect(error.code == .timedOut)
        }
    }
}

/// A store whose next append, once armed, waits (up to 10 s of real time) until the test lets it
/// go: a write in flight for as long as the test needs.
final class HeldAppendStore: SessionStore {
    let inner: InMemorySessionStore
    private let armed = Locked(false)
    private let gate = DispatchSemaphore(value: 0)
    private let gaveUp = Locked(false)

    init(_ inner: InMemorySessionStore) { self.inner = inner }

    /// The next append waits for ``release()``.
    func holdNextAppend() { armed.withLock { $0 = true } }
    func release() { gate.signal() }
    /// Indicates that a held append gave up waiting.
    var timedOut: Bool { gaveUp.withLock { $0 } }

    func load() throws(SessionStoreError) -> StoredRecords { try inner.load() }

    func append(_ records: [Data]) throws(SessionStoreError) {
        let hold = armed.withLock { armed in
            defer { armed = false }
            return armed
        }
        if hold, gate.wait(timeout: .now() + 10) == .timedOut { gaveUp.withLock { $0 = true } }
        try inner.append(records)
    }

    func replace(with records: [Data]) throws(SessionStoreError) { try inner.replace(with: records) }

    func close() { inner.close() }
}

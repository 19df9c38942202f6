import Foundation
import SDK
import SDKTesting
import Testing

extension SessionStoreTests {
    @Test("sent, its acknowledgement lost, killed: the relaunch re-sends it with its key, and the server applies it once")
    func lostAcknowledgementAcrossKill() async throws {
        let server = TestServer()
        let store = InMemorySessionStore()
        let first = try launch(server, store)
        try await withRunningSession(first) { status in
            try await status.waitFor(.connected)
            server.loseNextPublishAcknowledgement()
            server.setRefusingConnections(true)
            _ = Task { try await first.publish("once", to: "room") }
            try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
            await clock.settle()
            #expect(server.latestSequence(of: "room") == 1, "the server applied it")
            store.kill()
        }
        server.setRefusingConnections(false)
        let second = try launch(server, store.relaunched())
        try await withRunningSession(second) { status in
            let outcomes = PatientReader(second.earlierPublishOutcomes)
            try await second.connect()
            let outcome = try #require(await outcomes.next())
            #expect(outcome.state == .acknowledged(PublishReceipt(.acknowledged, sequence: 1)), "the first number: a re-send")
            #expect(server.latestSequence(of: "room") == 1, "not applied twice")
        }
    }

    @Test("a burst of publishes is a few writes, not one each (group commit); each is sent only once the store holds it")
    func groupCommit() async throws {
        let server = TestServer()
        let store = InMemorySessionStore()
        let session = try launch(server, store)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let before = store.writeCounts.appends
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 1...50 { group.addTask { _ = try await session.publish(JSONValue(n), to: "room") } }
                try await group.waitForAll()
            }
            #expect(server.latestSequence(of: "room") == 50)
            // The first record goes alone; what comes while it is written goes next, together; the
            // acknowledgements' records (forgotten: their callers have them) go the same way.
            #expect(store.writeCounts.appends - before < 20, "\(store.writeCounts.appends - before) appends for 50 publishes")
        }
    }

    @Test("one store handed to two sessions: the second runs in memory and says so; the first keeps writing")
    func oneStoreTwoSessions() async throws {
        let server = TestServer()
        let store = InMemorySessionStore()
        let first = try launch(server, store)
        let second = try launch(server, store)
        try await withRunningSession(first) { status in
            try await status.waitFor(.connected)
            try await withRunningSession(second) { secondStatus in
                try await secondStatus.waitFor(.connected)
                #expect(first.storeStatus == .durable)
                #expect(second.storeStatus == .inMemory(SessionStoreError(.inUse, "another session has this store open")))
            }
        }
    }

    @Test("a store that cannot be read yet (before the first unlock): the session runs in memory, says so, writes nothing to it; once the app comes to the foreground and it reads, an earlier launch's outbox and positions are merged with this launch's, and written whole")
    func notReadableYet() async throws {
        let server = TestServer()
        let store = InMemorySessionStore()
        // An earlier launch: it held "news" and left a publish in its outbox when it was killed.
        let lifecycle = LifecycleDriver()
        let first = try launch(server, store, lifecycle: lifecycle)
        try await withRunningSession(first) { status in
            try await status.waitFor(.connected)
            var news = try await first.subscribe(to: "news").makeAsyncIterator()
            _ = try server.publish("seen", to: "news")
            #expect(try await news.next()?.data == "seen")
            await lifecycle.background()
            let sending = Task { try await first.publish("from the earlier launch", to: "room") }
            try await first.waitForOutboxCount(1)
            await clock.settle()
            store.kill()
            sending.cancel()
        }
        _ = try server.publish("missed", to: "news")

        // Launched in the background before the first unlock: the store cannot be read.
        let kept = store.records
        let relaunched = store.relaunched()
        relaunched.failReads(with: SessionStoreError(.notReadableYet, "before the first unlock"))
        // Manual mode: the socket stays open across the return to the foreground, so the merge
        // alone (no resubscribe) must keep this launch's channels.
        let secondLifecycle = LifecycleDriver(initialState: .background)
        let second = Session(settings: try .testing(auto: false) { $0.store(relaunched) }, transport: server.transport(), clock: clock, lifecycle: secondLifecycle)
        try await withRunningSession(second) { status in
            let outcomes = PatientReader(second.earlierPublishOutcomes)
            await clock.settle()
            #expect(second.storeStatus == .inMemory(SessionStoreError(.notReadableYet, "before the first unlock")))
            // Still not readable when the app first comes to the foreground: it goes on in memory.
            await secondLifecycle.foreground()
            try await second.connect()
            #expect(second.storeStatus == .inMemory(SessionStoreError(.notReadableYet, "before the first unlock")))
            let room = PatientReader(messagesOf: try await second.subscribe(to: "room"))
            #expect(try await second.publish("from this launch", to: "room").isAcknowledged)
            #expect(await room.next()?.data == "from this launch")
            // A channel that gets nothing after the merge: its place is kept by the merge alone.
            let lobby = PatientReader(messagesOf: try await second.subscribe(to: "lobby"))
            _ = try server.publish("lobby 1", to: "lobby")
            #expect(await lobby.next()?.data == "lobby 1")
            #expect(await second.earlierPublishes.isEmpty, "nothing of the store is known yet")
            #expect(relaunched.records == kept, "never written while it could not be read")

            // The user unlocked: the next return to the foreground reads it and merges.
            relaunched.failReads(with: nil)
            await secondLifecycle.background()
            await secondLifecycle.foreground()
            #expect(second.status == .connected, "the same socket")
            #expect(second.storeStatus == .durable)
            let outcome = try #require(await outcomes.next())
            guard case .acknowledged = outcome.state else {
                Issue.record("the earlier launch's publish is not acknowledged: \(outcome)")
                return
            }
            #expect(outcome.data == "from the earlier launch")
            #expect(await room.next()?.data == "from the earlier launch")
            let news = PatientReader(messagesOf: try await second.subscribe(to: "news"))
            let again = await news.next()
            #expect(again?.data == "seen" && again?.isRedelivery == true, "resumed from where the earlier launch had finished: what it was handed comes again, flagged")
            #expect(await news.next()?.data == "missed")
            await clock.settle()
            #expect(relaunched.writeCounts.replaces >= 1, "the merged state written whole")
            relaunched.kill()
        }

        // And what was merged outlives this launch too.
        _ = try server.publish("later", to: "room")
        _ = try server.publish("lobby 2", to: "lobby")
        let third = try launch(server, store.relaunched())
        try await withRunningSession(third) { status in
            let room = PatientReader(messagesOf: try await third.subscribe(to: "room"))
            let lobby = PatientReader(messagesOf: try await third.subscribe(to: "lobby"))
            try await status.waitFor(.connected)
            #expect(await room.next()?.data == "later", "this launch's channel resumed after what it was handed")
            #expect(await lobby.next()?.data == "lobby 2", "what the launch was handed in memory counts as finished at the merge: not again")
            #expect(await third.earlierPublishes.map(\.data) == ["from the earlier launch"], "listed until dismissed")
        }
    }

    @Test("a full disk: the session goes on in memory and says so; once the disk has room, the whole state is written and it is durable again")
    func diskFull() async throws {
        let server = TestServer()
        let store = InMemorySessionStore()
        let session = try launch(server, store)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            store.failWrites(with: SessionStoreError(.diskFull, "full"))
            // The outcome is read with patience: a publish left waiting on the failed write fails
            // in 10 s saying so, not at the suite's time limit.
            let (outcomes, outcome) = AsyncStream<Result<PublishReceipt, any Error>>.makeStream()
            Task {
                do { outcome.yield(.success(try await session.publish("a", to: "room"))) } catch { outcome.yield(.failure(error)) }
                outcome.finish()
            }
            #expect(await session.outboxCountReaches(0, within: .seconds(10)), "not held back by the store")
            // A publish that throws fails the test with its error, as `call.value` did.
            #expect(try #require(await PatientReader(outcomes).next(), "the publish is told its outcome").get().isAcknowledged)
            #expect(session.storeStatus == .inMemory(SessionStoreError(.diskFull, "full")))
            store.failWrites(with: nil)
            let room = try await session.subscribe(to: "room")
            await clock.settle()
            #expect(session.storeStatus == .durable)
            #expect(store.writeCounts.replaces == 1, "the whole state, in place of what was lost")
            _ = room
        }
    }
}

/// A store that notes, at each append, how much had gone out (`wentOut`: the publishes a
/// server received, the frames a transport sent): what the write-ahead rule is checked with.
final class WriteAheadProbe: SessionStore {
    let inner: InMemorySessionStore
    let wentOut: @Sendable () -> Int
    /// For each append: its records' text, and what had gone out then.
    let appends = Locked<[(records: [String], publishesReceived: Int)]>([])

    init(_ inner: InMemorySessionStore = InMemorySessionStore(), wentOut: @escaping @Sendable () -> Int) {
        self.inner = inner
        self.wentOut = wentOut
    }

    func load() throws(SessionStoreError) -> StoredRecords { try inner.load() }

    func append(_ records: [Data]) throws(SessionStoreError) {
        let received = wentOut()
        appends.withLock { $0.append((records.map { String(decoding: $0, as: UTF8.self) }, received)) }
        try inner.append(records)
    }

    func replace(with records: [Data]) throws(SessionStoreError) { try inner.replace(with: records) }

    func close() { inner.close() }
}

extension SessionStoreTests {
    @Test("write-ahead: a publish's record is written before its frame goes out")
    func writeAhead() async throws {
        let server = TestServer()
        let probe = WriteAheadProbe { server.receivedMessages.filter { if case .publish = $0 { true } else { false } }.count }
        let session = Session(settings: try .testing { $0.store(probe) }, transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            // A burst: while one write runs, the next publishes wait for theirs.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 1...20 { group.addTask { _ = try await session.publish(JSONValue(n), to: "room") } }
                try await group.waitForAll()
            }
        }
        // At each append, the server cannot have received more publishes than earlier appends recorded.
        var recorded = 0
        for append in probe.appends.withLock({ $0 }) {
            #expect(append.publishesReceived <= recorded, "the server had \(append.publishesReceived) publishes when the store held \(recorded)")
            recorded += append.records.filter { $0.hasPrefix(#"{"publish""#) }.count
        }
        #expect(recorded == 20)
    }
}

extension SessionStoreTests {
    @Test("shut down with publishes waiting: each await ends with sessionEnded, and the next launch sends them")
    func shutdownHandsOver() async throws {
        let server = TestServer()
        let store = InMemorySessionStore()
        let lifecycle = LifecycleDriver()
        let first = try launch(server, store, lifecycle: lifecycle)
        var waiting: Task<PublishReceipt, any Error>?
        try await withRunningSession(first) { status in
            try await status.waitFor(.connected)
            await lifecycle.background()
            waiting = Task { try await first.publish("later", to: "room") }
            try await first.waitForOutboxCount(1)
        }
        let ended = await #expect(throws: SessionError.self) { try await waiting?.value }
        #expect(ended?.code == .sessionEnded)
        let second = try launch(server, store.relaunched())
        try await withRunningSession(second) { status in
            let outcomes = PatientReader(second.earlierPublishOutcomes)
            try await status.waitFor(.connected)
            #expect(try #require(await outcomes.next()).state == .acknowledged(PublishReceipt(.acknowledged, sequence: 1)))
        }
    }
}

extension SessionStoreTests {
    @Test("two subscribers of one channel: the relaunch resumes from where the slower one finished")
    func slowerSubscriberDecides() async throws {
        let server = TestServer()
        let store = InMemorySessionStore()
        let first = try launch(server, store)
        try await withRunningSession(first) { status in
            try await status.waitFor(.connected)
            let fast = try await first.subscribe(to: "room")
            let slow = try await first.subscribe(to: "room")
            _ = try server.publish(1, to: "room")
            _ = try server.publish(2, to: "room")
            var fastReading = fast.makeAsyncIterator()
            var slowReading = slow.makeAsyncIterator()
            #expect(try await fastReading.next()?.data == 1)
            #expect(try await fastReading.next()?.data == 2, "the fast one finished 1")
            #expect(try await slowReading.next()?.data == 1, "the slow one finished nothing")
            await clock.settle()
            store.kill()
        }
        let second = try launch(server, store.relaunched())
        try await withRunningSession(second) { status in
            let room = try await second.subscribe(to: "room")
            try await status.waitFor(.connected)
            let reading = PatientReader(messagesOf: room)
            for n in 1...2 {
                let message = await reading.next()
                #expect(message?.data == JSONValue(n) && message?.isRedelivery == true)
            }
        }
    }
}

import Foundation
@testable import SDK
import SDKTesting
import Testing

/// A store that checks, as each write begins, that the app knows nothing the store does not:
/// a kill at that moment would bring it back as new (a message unflagged, a publish it was told
/// the outcome of).
private final class WriteAheadCheck: SessionStore {
    let kept = InMemorySessionStore()
    /// The position of the last message handed to the app (set once it subscribed).
    let handed = Locked<(@Sendable () -> StreamPosition?)?>(nil)
    /// How many publishes the app has seen end.
    let ended = Locked(0)
    let violations = Locked([String]())

    func load() throws(SessionStoreError) -> StoredRecords { try kept.load() }
    func append(_ records: [Data]) throws(SessionStoreError) {
        check()
        try kept.append(records)
    }
    func replace(with records: [Data]) throws(SessionStoreError) {
        check()
        try kept.replace(with: records)
    }
    func close() { kept.close() }

    private func check() {
        let records = kept.records.compactMap(StoreRecord.decoded)
        let told = ended.withLock { $0 }
        let dismissed = records.filter { if case .publishDismissed = $0 { true } else { false } }.count
        if told > dismissed {
            violations.withLock { $0.append("the app saw \(told) publishes end while the store knew of \(dismissed)") }
        }
        guard let handed = handed.withLock({ $0 })?() else { return }
        var stored: StreamPosition?
        for case .position(_, let position) in records { stored = position }
        if stored.flatMap({ $0.isAtOrPast(handed) }) != true {
            violations.withLock { $0.append("the app held \(handed) while the store knew \(stored.map(String.init(describing:)) ?? "nothing")") }
        }
    }
}

extension SessionStoreTests {
    @Test("a message is handed to the app only once the store knows it was: a kill at any point brings again only what is flagged")
    func deliveriesWaitForTheStore() async throws {
        let server = TestServer()
        let store = WriteAheadCheck()
        let session = Session(settings: try .testing { $0.store(store) }, transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            store.handed.withLock { $0 = { room.lastHandedPosition } }
            for index in 1...20 {
                _ = try server.publish(JSONValue(index), to: "room")
                if index % 3 == 0 { await clock.settle() }
            }
            let messages = PatientReader(messagesOf: room)
            for index in 1...20 {
                #expect(await messages.next()?.data == JSONValue(index))
            }
        }
        #expect(store.violations.withLock { $0 } == [])
    }
}

extension SessionStoreTests {
    @Test("a publish's await returns once the store knows it ended: a kill right after cannot send it again or tell it twice")
    func outcomesWaitForTheStore() async throws {
        let server = TestServer()
        let store = WriteAheadCheck()
        let session = Session(settings: try .testing { $0.store(store) }, transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 1...20 {
                    group.addTask {
                        _ = try await session.publish(JSONValue(index), to: "room")
                        store.ended.withLock { $0 += 1 }
                    }
                }
                try await group.waitForAll()
            }
        }
        #expect(server.latestSequence(of: "room") == 20)
        #expect(store.violations.withLock { $0 } == [])
    }
}

extension SessionStoreTests {
    @Test("where a subscription began is kept as soon as the server made it: killed before any message, the relaunch gets every one published since")
    func subscriptionStartIsKept() async throws {
        let server = TestServer()
        _ = try server.publish("before", to: "room")
        let store = InMemorySessionStore()
        let first = try launch(server, store)
        try await withRunningSession(first) { status in
            try await status.waitFor(.connected)
            let room = try await first.subscribe(to: "room")
            await clock.settle()
            store.kill()
            _ = room
        }
        _ = try server.publish("missed 1", to: "room")
        _ = try server.publish("missed 2", to: "room")
        let second = try launch(server, store.relaunched())
        try await withRunningSession(second) { status in
            let room = try await second.subscribe(to: "room")
            try await status.waitFor(.connected)
            let messages = PatientReader(messagesOf: room)
            #expect(await messages.next()?.data == "missed 1")
            #expect(await messages.next()?.data == "missed 2")
        }
    }
}

/// A store that keeps every record appended to it, decoded.
private final class RecordingStore: SessionStore {
    let kept: InMemorySessionStore
    let appended = Locked([StoreRecord]())

    init(_ kept: InMemorySessionStore) { self.kept = kept }

    func load() throws(SessionStoreError) -> StoredRecords { try kept.load() }
    func append(_ records: [Data]) throws(SessionStoreError) {
        appended.withLock { $0 += records.compactMap(StoreRecord.decoded) }
        try kept.append(records)
    }
    func replace(with records: [Data]) throws(SessionStoreError) { try kept.replace(with: records) }
    func close() { kept.close() }
}

extension SessionStoreTests {
    @Test("killed again while the relaunch brings back what the first launch was handed: the mark of how far the app was handed never goes back, so the third launch still flags them")
    func handedMarkNeverGoesBack() async throws {
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
            #expect(try await messages.next()?.data == "handed")
            await clock.settle()
            store.kill()
        }
        let recording = RecordingStore(store.relaunched())
        let second = Session(settings: try .testing { $0.store(recording) }, transport: server.transport(), clock: clock)
        try await withRunningSession(second) { status in
            let room = try await second.subscribe(to: "room")
            try await status.waitFor(.connected)
            let messages = PatientReader(messagesOf: room)
            #expect(await messages.next()?.isRedelivery == true)
            await clock.settle()
        }
        let marks = recording.appended.withLock { $0 }.compactMap { record -> UInt64? in
            if case .position("room", let position) = record { position?.sequence } else { nil }
        }
        #expect(marks.allSatisfy { $0 >= 2 }, "never below the second message, handed to the first launch: \(marks)")
    }
}

/// A store that logs each append as it returns, beside what the test logs: which came first.
private final class OrderLog: SessionStore {
    let kept = InMemorySessionStore()
    let log = Locked([String]())

    func load() throws(SessionStoreError) -> StoredRecords { try kept.load() }
    func append(_ records: [Data]) throws(SessionStoreError) {
        try kept.append(records)
        let channels = records.compactMap(StoreRecord.decoded).compactMap { record -> String? in
            if case .finished(let channel, _, _) = record { channel } else { nil }
        }
        log.withLock { $0 += channels.map { "stored \($0)" } }
    }
    func replace(with records: [Data]) throws(SessionStoreError) { try kept.replace(with: records) }
    func close() { kept.close() }
}

extension SessionStoreTests {
    @Test("subscribe returns once the store holds where the subscription began: a kill right after cannot leave the relaunch subscribing from a later now")
    func subscribeWaitsForTheStore() async throws {
        let server = TestServer()
        let store = OrderLog()
        let session = Session(settings: try .testing { $0.store(store) }, transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            var held: [Subscription] = []
            for index in 1...40 {
                _ = try server.publish("before", to: "room\(index)")
                held.append(try await session.subscribe(to: "room\(index)"))
                store.log.withLock { $0.append("told room\(index)") }
            }
            _ = held
        }
        let log = store.log.withLock { $0 }
        for index in 1...40 {
            let stored = log.firstIndex(of: "stored room\(index)"), told = log.firstIndex(of: "told room\(index)")
            #expect(stored != nil && told != nil && stored! < told!, "room\(index): told at \(String(describing: told)), stored at \(String(describing: stored))")
        }
    }
}

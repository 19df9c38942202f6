import SDK
import SDKTesting
import Testing

/// A session with a store: the outbox, the positions and the protocol's session state outlive
/// the process. Each test kills the app (`InMemorySessionStore.kill()`) and launches it again on
/// what survived.
@Suite("Session: the store across a kill", .timeLimit(.minutes(1)))
struct SessionStoreTests {
    let clock = TestClock()

    /// A launch of the app: a session on `store`, with a lifecycle of its own (in the foreground).
    func launch(_ server: TestServer, _ store: InMemorySessionStore, lifecycle: LifecycleDriver = LifecycleDriver()) throws -> Session {
        Session(settings: try .testing { $0.store(store) }, transport: server.transport(), clock: clock, lifecycle: lifecycle)
    }

    @Test("publish while offline, kill, relaunch, reconnect: the publish is acknowledged once, the missed messages arrive, and what the app had not finished comes again, flagged")
    func relaunchDeliversOutboxAndCatchesUp() async throws {
        let server = TestServer()
        let store = InMemorySessionStore()
        let lifecycle = LifecycleDriver()
        let first = try launch(server, store, lifecycle: lifecycle)
        var sending: Task<PublishReceipt, any Error>?
        try await withRunningSession(first) { status in
            try await status.waitFor(.connected)
            #expect(first.storeStatus == .durable)
            let room = try await first.subscribe(to: "room")
            _ = try server.publish("finished", to: "room")
            _ = try server.publish("handed", to: "room")
            var messages = room.makeAsyncIterator()
            #expect(try await messages.next()?.data == "finished")
            // Asking for the next message finishes the one before it; "handed" is not finished.
            #expect(try await messages.next()?.data == "handed")
            await lifecycle.background()
            sending = Task { try await first.publish("sent offline", to: "room") }
            try await first.waitForOutboxCount(1)
            await clock.settle()
            store.kill()
            _ = try server.publish("missed", to: "room")
        }
        // Its await died with the process (here: ended with the session, handed to the store).
        let ended = await #expect(throws: SessionError.self) { try await sending?.value }
        #expect(ended?.code == .sessionEnded)
        let second = try launch(server, store.relaunched())
        try await withRunningSession(second) { status in
            let outcomes = PatientReader(second.earlierPublishOutcomes)
            let reports = PatientReader(second.recoveryReports)
            let room = try await second.subscribe(to: "room")
            #expect(await second.earlierPublishes.map(\.state) == [.waiting])
            try await status.waitFor(.connected)
            let messages = PatientReader(messagesOf: room)
            let again = await messages.next()
            #expect(again?.data == "handed" && again?.isRedelivery == true, "handed to the killed launch, not finished: again, flagged")
            let missed = await messages.next()
            #expect(missed?.data == "missed" && missed?.isRedelivery == false, "missed while dead")
            #expect(await messages.next()?.data == "sent offline")
            let outcome = try #require(await outcomes.next())
            #expect(outcome.state == .acknowledged(PublishReceipt(.acknowledged, sequence: 4)))
            #expect(server.latestSequence(of: "room") == 4, "applied once")
            #expect(await second.earlierPublishes.map(\.state) == [outcome.state], "listed until dismissed")
            let report = try #require(await reports.next())
            #expect(report.trigger == .launch && report.caughtUp == ["room": 2], "the catch-up counted as for any reconnect: \(report)")
            #expect(report.reachedBack.keys.sorted() == ["room"] && report.reachedBack["room"].map { $0 >= .zero } == true, "how far back: \(report.reachedBack)")
            try await second.dismissPublish(outcome.id)
            #expect(await second.earlierPublishes.isEmpty)
        }
    }
}

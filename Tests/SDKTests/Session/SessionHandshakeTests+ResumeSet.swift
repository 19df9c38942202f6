import ConnectionPolicy
import Foundation
import SDK
import SDKTesting
import Testing

/// Version 3 end to end on the test clock: many subscriptions recover in the upgrade's round
/// trip by the set the server kept, and a server that no longer holds it gets them in frames.
@Suite("Session: the resume set (Tether version 3)", .timeLimit(.minutes(1)))
struct SessionResumeSetTests {
    let clock = TestClock()
    let lifecycle = LifecycleDriver()

    @Test("600 subscriptions (too many to name in a header) recover in the upgrade's one round trip: the set named by its token, nothing sent")
    func manySubscriptionsInOneRoundTrip() async throws {
        let server = TestServer(speaksVersion2: true)
        let transport = server.transport()
        let session = Session(settings: try .testing(auto: true), transport: transport, clock: clock, lifecycle: lifecycle)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            var held: [Subscription] = []
            for index in 0..<600 { held.append(try await session.subscribe(to: "channel-\(index)")) }
            await lifecycle.background()
            for index in 0..<600 { try server.publish(JSONValue(index), to: "channel-\(index)") }
            let reports = PatientReader(session.recoveryReports)
            let before = server.receivedMessages.count
            server.setAnswerDelay(.milliseconds(100), on: clock)
            await lifecycle.foreground()
            await clock.advance(by: .milliseconds(100))
            let report = try #require(await reports.next())
            #expect(report.isComplete)
            #expect(report.caughtUp.count == 600 && report.caughtUp.values.allSatisfy { $0 == 1 })
            #expect(report.duration == .milliseconds(100), "the answers to the upgrade itself: one round trip")
            #expect(server.receivedMessages.dropFirst(before).isEmpty, "nothing to send")
            let headers = try #require(transport.requestedHeaders.last)
            #expect(headers["Tether-Resume"] == nil)
            let set = try TetherResumeSet.Request(headerValue: try #require(headers["Tether-Resume-Set"]))
            #expect(set.count == 600 && set.wantedCount == 600)
            #expect(try #require(headers["Tether-Resume-Set"]).utf8.count < 700, "a character a position")
            var first = held[0].makeAsyncIterator()
            #expect(try await first.next()?.data == 0)
            #expect(await clock.runUntilIdle() == .idle)
            server.setAnswerDelay(nil, on: clock)
            withExtendedLifetime(held) {}
        }
    }

    @Test("a restarted server no longer holds the set: the subscriptions go in frames from their positions, and the stream goes on")
    func serverForgotTheSet() async throws {
        let server = TestServer(speaksVersion2: true)
        let transport = server.transport()
        let session = Session(settings: try .testing(auto: true), transport: transport, clock: clock, lifecycle: lifecycle)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            var messages = room.makeAsyncIterator()
            try server.publish("before", to: "room")
            #expect(try await messages.next()?.data == "before")
            let before = server.receivedMessages.count
            server.restart()
            try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
            await clock.advance(by: .seconds(30))
            try await status.waitFor(.connected)
            #expect(transport.requestedHeaders.last?["Tether-Resume-Set"] != nil, "the set was named")
            let sent = server.receivedMessages.dropFirst(before)
            #expect(sent.map { if case .subscribe(_, let channel, let since) = $0 { "\(channel) since \(since.map(String.init) ?? "-")" } else { "other" } } == ["room since 1"])
            try server.publish("after", to: "room")
            #expect(try await messages.next()?.data == "after")
            #expect(await clock.runUntilIdle() == .idle)
        }
    }

    @Test("a version-2 server (no set): the next upgrade names the subscriptions again, by name")
    func version2Server() async throws {
        let server = TestServer(speaksVersion2: true)
        server.setAcceptsVersion3(false)
        let transport = server.transport()
        let session = Session(settings: try .testing(auto: true), transport: transport, clock: clock, lifecycle: lifecycle)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            await lifecycle.background()
            await lifecycle.foreground()
            try await status.waitFor(.connected)
            let headers = try #require(transport.requestedHeaders.last)
            #expect(headers["Tether-Resume-Set"] == nil)
            #expect(headers["Tether-Resume"] == "1;room;0")
            #expect(await clock.runUntilIdle() == .idle)
            withExtendedLifetime(room) {}
        }
    }
}

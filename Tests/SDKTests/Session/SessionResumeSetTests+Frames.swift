import SDK
import SDKTesting
import Testing

/// A resumed set costs the server one frame, whatever its size: the `resume_set` that answers
/// every member, then only the messages they missed — no `ok` per subscription.
extension SessionResumeSetTests {
    @Test("the server answers a resumed set of 200 with one frame, then only what was missed", arguments: [0, 7])
    func oneFrameAnswersTheSet(missed: Int) async throws {
        let server = TestServer(speaksVersion2: true)
        let session = Session(settings: try .testing(auto: true), transport: server.transport(), clock: clock, lifecycle: lifecycle)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            var held: [Subscription] = []
            for index in 0..<200 { held.append(try await session.subscribe(to: "channel-\(index)")) }
            await lifecycle.background()
            for index in 0..<missed { try server.publish(JSONValue(index), to: "channel-\(index * 20)") }
            let reports = PatientReader(session.recoveryReports)
            let before = server.traffic
            await lifecycle.foreground()
            let report = try #require(await reports.next())
            #expect(report.isComplete)
            #expect(report.caughtUp.count == missed && report.caughtUp.values.allSatisfy { $0 == 1 })
            let after = server.traffic
            #expect(after.serverFrames - before.serverFrames == 1 + missed, "the set's answer, then one frame per missed message")
            #expect(server.requests(onConnection: 2).filter(\.isSubscribe).count == 200, "every member resumed by the set")
            for index in 0..<missed {
                var messages = held[index * 20].makeAsyncIterator()
                #expect(try await messages.next()?.data == JSONValue(index))
            }
            withExtendedLifetime(held) {}
        }
    }
}

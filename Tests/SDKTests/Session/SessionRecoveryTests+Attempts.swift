import ConnectionPolicy
import SDK
import SDKTesting
import Testing

/// A recovery that takes several connection attempts: one report, from the trigger to fully
/// recovered, counting every attempt.
extension SessionRecoveryTests {
    @Test("a recovery across refused attempts: its connected step counts every attempt, and its duration runs from the loss to recovered")
    func reportAcrossFailedAttempts() async throws {
        let server = TestServer()
        let session = try makeSession(server) { $0.reconnectBackoff(Backoff(initial: .seconds(1), multiplier: 2, maximum: .seconds(8), jitter: 0)) }
        let reports = PatientReader(session.recoveryReports)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            #expect(await reports.next()?.trigger == .launch)
            let room = try await session.subscribe(to: "room")
            await clock.advance(by: .seconds(60))  // a working connection: its loss is retried at once
            server.setRefusingConnections(true)
            server.dropAllConnections()
            await clock.settle()                   // attempt 1, at once: refused
            await clock.advance(by: .seconds(1))   // attempt 2: refused
            server.setRefusingConnections(false)
            await clock.advance(by: .seconds(2))   // attempt 3: open
            let report = try #require(await reports.next())
            #expect(report.trigger == .reconnect)
            let connected = try #require(report.steps.first)
            #expect(connected.id == .connected && connected.outcome == .succeeded && connected.attempts == 3 && connected.isReplay, "\(report.steps)")
            #expect(report.duration == .seconds(3), "from the loss, not from the attempt that worked: \(report.duration)")
            #expect(report.isComplete)
            _ = room
        }
    }
}

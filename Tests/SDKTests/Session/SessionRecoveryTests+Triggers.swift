import ConnectionPolicy
import SDK
import SDKTesting
import Testing

/// Every `RecoveryReport.Trigger` an app switches on is produced: what started each recovery.
extension SessionRecoveryTests {
    @Test("the triggers: launch (the first connection), networkRestored (reachable again after a loss while unreachable), policyReplaced (a new policy connects)")
    func triggers() async throws {
        let server = TestServer()
        let session = try makeSession(server)
        let reports = PatientReader(session.recoveryReports)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            #expect(await reports.next()?.trigger == .launch)

            await clock.advance(by: .seconds(60))
            await session.setNetworkReachable(false)
            server.dropAllConnections()
            await clock.settle()
            await clock.advance(by: .seconds(60))
            #expect(server.openConnectionCount == 0, "no retry while unreachable")
            await session.setNetworkReachable(true)
            #expect(await reports.next()?.trigger == .networkRestored)

            await session.disconnect()
            try await status.waitFor { if case .disconnected = $0 { true } else { false } }
            await session.replacePolicy(AutoPolicy())
            #expect(await reports.next()?.trigger == .policyReplaced)
        }
    }
}

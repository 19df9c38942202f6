import SDK
import SDKTesting
import Testing

/// What a host app's own test of its wrapped client looks like (the doc comment of
/// `TestConnection`, run): ten lines, no sleeps.
@Suite("TestConnection: a host app's test of a wrapped client")
struct TestConnectionTests {
    @Test("100 quick background/foreground cycles: closes of attempts that never opened are not strangers")
    func quickCyclesHaveNoStrangerCloses() async throws {
        let (client, lifecycle) = (TestConnection(), LifecycleDriver())
        let controller = ConnectionController(connection: client, policy: AutoPolicy(), clock: TestClock(), lifecycle: lifecycle)
        try await withRunningController(controller) { status in
            try await status.waitFor(.connected)
            for _ in 0..<100 {
                await lifecycle.background()
                await lifecycle.foreground()
            }
            try await status.waitFor(.connected)
        }
        #expect(client.openCount == 0, "every connection opened was closed")
        #expect(client.strangerCloses == 0, "every close names the object its open was handed (\(client.openCalls) opens, \(client.closeCalls) closes)")
    }

    @Test("a wrapped client disconnects in the background and comes back in the foreground")
    func wrappedClientFollowsTheLifecycle() async throws {
        let (client, lifecycle) = (TestConnection(), LifecycleDriver())
        let controller = ConnectionController(connection: client, policy: AutoPolicy(), clock: TestClock(), lifecycle: lifecycle)
        try await withRunningController(controller) { status in
            try await status.waitFor(.connected)
            await lifecycle.background()
            #expect(controller.status == .disconnected(.appBackgrounded))
            await lifecycle.foreground()
            try await status.waitFor(.connected)
        }
        #expect(client.openCalls == 2 && client.openCount == 0)
    }
}

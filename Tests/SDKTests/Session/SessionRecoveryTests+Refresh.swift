import ConnectionPolicy
import SDK
import SDKTesting
import Testing

extension SessionRecoveryTests {
    @Test("background refresh: connects, catches up, flushes, lets go; the policy's state is untouched")
    func backgroundRefresh() async throws {
        let server = TestServer()
        let session = try makeSession(server)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            await lifecycle.background()
            try await server.waitForOpenConnections(0)
            try server.publish("missed", to: "room")
            try await withThrowingTaskGroup(of: UInt64.self) { group in
                group.addTask { try await session.publish("queued", to: "room").sequence ?? 0 }
                try await session.waitForOutboxCount(1)
                let report = try await session.refresh(within: .seconds(20))
                #expect(report.trigger == .backgroundRefresh)
                #expect(report.caughtUp == ["room": 1])
                #expect(report.outboxFlushed == 1)
                #expect(try await group.next() == 2)
            }
            #expect(session.status == .disconnected(.appBackgrounded))
            try await server.waitForOpenConnections(0)
            #expect(session.armedTimers == [])
            var messages = room.makeAsyncIterator()
            #expect(try await messages.next()?.data == "missed")
            // The echo of our own publish came after the refresh let go: caught up on return.
            await lifecycle.foreground()
            try await status.waitFor(.connected)
            #expect(try await messages.next()?.data == "queued")
        }
    }

    @Test("on a constrained path (Low Data Mode) a discretionary refresh is deferred, opening nothing; one the app asks for now runs; with PowerSaving.off it is never deferred")
    func refreshDeferredWhenConstrained() async throws {
        for rules in [PowerSaving.standard, .off] {
            let server = TestServer()
            let conditions = ConditionsDriver(DeviceConditions(isConstrained: true, interface: .wifi))
            let session = Session(
                settings: try .testing(auto: false) { $0.powerSaving(rules) }, transport: server.transport(), clock: clock, lifecycle: lifecycle,
                conditions: conditions
            )
            try await withRunningSession(session) { _ in
                await lifecycle.background()
                if rules.isEnabled {
                    let error = await #expect(throws: SessionError.self) { _ = try await session.refresh(within: .seconds(20)) }
                    #expect(error?.code == .deferred)
                    #expect(server.acceptedConnectionCount == 0, "deferred: nothing opened")
                }
                let report = try await session.refresh(within: .seconds(20), discretionary: rules.isEnabled ? false : true)
                #expect(report.trigger == .backgroundRefresh)
                #expect(server.acceptedConnectionCount == 1)
            }
        }
    }

    @Test("a background refresh whose attempt cannot connect fails at once with connectionLost; the policy hears nothing")
    func backgroundRefreshCannotConnect() async throws {
        let server = TestServer()
        let session = try makeSession(server, auto: false)
        server.setRefusingConnections(true)
        try await withRunningSession(session) { _ in
            do {
                _ = try await session.refresh(within: .seconds(20))
                Issue.record("the refresh returned")
            } catch let error as SessionError {
                #expect(error.code == .connectionLost, "\(error)")
            }
            #expect(session.status == .disconnected(.notStarted))
            #expect(session.armedTimers == [], "no retry, no deadline left behind")
        }
    }

    @Test("background refresh past its deadline throws timedOut and lets go of its connection")
    func backgroundRefreshDeadline() async throws {
        let server = TestServer()
        let session = try makeSession(server, auto: false)
        server.setFrozen(true)
        try await withRunningSession(session) { _ in
            try await confirmation("timed out") { timedOut in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        do {
                            _ = try await session.refresh(within: .seconds(5))
                        } catch let error as SessionError where error.code == .timedOut {
                            timedOut()
                        }
                    }
                    try await server.waitForMessages(1)
                    await clock.advance(by: .seconds(5))
                    try await group.waitForAll()
                }
            }
            #expect(session.status == .disconnected(.notStarted))
            try await server.waitForOpenConnections(0)
            #expect(session.armedTimers == [])
        }
    }
}

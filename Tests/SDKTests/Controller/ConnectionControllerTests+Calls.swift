import ConnectionPolicy
import SDK
import SDKTesting
import Testing

extension ConnectionControllerTests {
    @Test("shutdown() returns once the client's connection is closed; afterwards nothing is open and the status says why")
    func shutdownClosesFirst() async throws {
        let controller = controller(auto())
        let running = Task { await controller.run() }
        var statuses = controller.statusUpdates.makeAsyncIterator()
        while let status = await statuses.next(), status != .connected {}
        await controller.shutdown()
        #expect(client.openCount == 0)
        #expect(client.closeCalls == 1)
        #expect(controller.status == .disconnected(.sessionEnded))
        await running.value
    }

    struct Rejected: Error {}

    @Test("an error the app classifies as fatal ends in disconnected without a retry; connect() tries again")
    func fatalError() async throws {
        client.script(.fails(Rejected()))
        let controller = controller(auto(), isRetryable: { $0 is Rejected ? .doNotRetry : .retry })
        try await withRunningController(controller) { status in
            try await status.waitFor { if case .disconnected(let reason) = $0 { reason.code == .error } else { false } }
            #expect(controller.armedTimers == [])
            await clock.advance(by: .seconds(60))
            #expect(client.openCalls == 1)
            try await controller.connect()
            #expect(client.openCalls == 2)
        }
    }

    @Test("connect() in the background in Auto mode is refused as notWanted; after shutdown every call says sessionEnded")
    func refusals() async throws {
        let controller = ConnectionController(connection: client, policy: auto(), clock: clock, lifecycle: LifecycleDriver(initialState: .background), logger: .silent)
        try await withRunningController(controller) { _ in
            let error = await #expect(throws: SessionError.self) { try await controller.connect() }
            #expect(error?.code == .notWanted)
        }
        do {
            try await controller.connect()
            Issue.record("connect() after shutdown returned")
        } catch let error as SessionError {
            #expect(error.code == .sessionEnded)
        }
        #expect(controller.status == .disconnected(.sessionEnded))
    }

    @Test("ping() without a connection is notConnected; a client ping that never answers times out")
    func pingFailures() async throws {
        let started = OneShotBox()
        // A client ping that is never answered: a stream nothing is ever sent on (its
        // continuation held), left only when the controller gives up and cancels it.
        let unanswered = AsyncStream<Void>.makeStream()
        let controller = controller(manual(), ping: {
            started.fire("pinging")
            for await _ in unanswered.stream {}
            _ = unanswered.continuation
        })
        try await withRunningController(controller) { _ in
            await #expect(throws: SessionError(.notConnected, "ping needs a connection (status: disconnected (notStarted))")) { try await controller.ping() }
            try await controller.connect()
            async let pinged: Void = controller.ping()
            // The deadline is fixed before the client's ping starts.
            #expect(await started.value() == "pinging")
            await clock.advance(by: .seconds(10))
            do {
                try await pinged
                Issue.record("the ping returned")
            } catch let error as SessionError {
                #expect(error.code == .timedOut)
            }
        }
    }

    @Test("replacePolicy: Auto → Manual keeps the open connection; the background then follows Manual's watchdog")
    func replacePolicy() async throws {
        let controller = controller(auto())
        try await withRunningController(controller) { status in
            try await status.waitFor(.connected)
            await controller.replacePolicy(manual())
            #expect(controller.policyName == "manual")
            #expect(controller.status == .connected)
            await lifecycle.background()
            #expect(controller.status == .connected)
            #expect(controller.armedTimers == [.watchdog])
        }
        #expect(client.openCalls == 1)
    }

    @Test("background time is held exactly while a connection is kept in the background, and released after the close")
    func backgroundTime() async throws {
        let time = TestBackgroundTime()
        let controller = controller(manual(), backgroundTime: time)
        try await withRunningController(controller) { status in
            try await controller.connect()
            #expect(time.heldCount == 0, "never in the foreground")
            await lifecycle.background()
            #expect(time.heldCount == 1)
            await clock.advance(by: .seconds(30))
            try await status.waitFor(.disconnected(.watchdogExpired))
            try await client.waitForCloseCalls(1)
            #expect(await time.waitForHeld(0, timeout: .seconds(10)))
        }
        #expect(time.begunCount == time.endedCount)
        #expect(time.doubleEndCount == 0)
    }

    @Test("the OS taking the background time back closes the connection in order")
    func backgroundTimeExpires() async throws {
        let time = TestBackgroundTime()
        let controller = controller(manual(), backgroundTime: time)
        try await withRunningController(controller) { status in
            try await controller.connect()
            await lifecycle.background()
            time.expireAll()
            try await status.waitFor { $0.reason == .backgroundTimeExpired }
            try await client.waitForCloseCalls(1)
            #expect(client.openCount == 0)
        }
    }

    @Test("the callback shapes report success and failure")
    func callbacks() async throws {
        let controller = controller(manual())
        try await withRunningController(controller) { status in
            let connected = OneShotBox()
            controller.connect(onSuccess: { connected.fire("ok") }, onError: { connected.fire("\($0)") })
            #expect(await connected.value() == "ok")
            let disconnected = OneShotBox()
            controller.disconnect(onSuccess: { disconnected.fire("ok") })
            #expect(await disconnected.value() == "ok")
            #expect(controller.status == .disconnected(.appRequested))
        }
    }
}

import NIOTransport
import ReferenceServer
import SDK
import SDKTesting

/// Runs one schedule against the reference server and returns the invariants it broke.
struct ChaosRunner {
    let host: ServerHost
    let seed: UInt64
    let auto: Bool
    let settle: Duration

    func run(_ steps: [ChaosStep]) async throws -> [String] {
        let port = host.port
        let transport = CountingTransport(NIOWebSocketTransport(connectTimeout: .seconds(1)))
        let lifecycle = ManualLifecycleSource()
        let settings = try AppSettings.Builder()
            .serverURL("ws://127.0.0.1:\(port)/")
            .token("chaos")
            .autoEstablishSocketConnection(auto)
            .backgroundTimeout(.milliseconds(400))
            .reconnectBackoff(Backoff(initial: .milliseconds(20), multiplier: 2, maximum: .milliseconds(200), jitter: 0.2))
            .jitter(.seeded(seed))
            .connectTimeout(.milliseconds(500))
            .requestTimeout(.milliseconds(500))
            .outboxTimeout(.seconds(2))
            .stableConnectionAfter(.milliseconds(100))
            .heartbeat(interval: .milliseconds(300), timeout: .milliseconds(250))
            .foregroundProbeTimeout(.milliseconds(250))
            .build()
        let backgroundTime = TestBackgroundTime()
        let session = Session(settings: settings, transport: transport, lifecycle: lifecycle, backgroundTime: backgroundTime)
        let violations = Locked([String]())
        func violated(_ text: String) { violations.withLock { $0.append(text) } }

        let epoch = Locked(0)
        var consumers: [Int: (subscription: Subscription, received: Locked<[(epoch: Int, sequence: UInt64)]>, task: Task<Void, Never>)] = [:]
        var app = ChaosApp(session: session, lifecycle: lifecycle, transport: transport, backgroundTime: backgroundTime, auto: auto)

        await withTaskGroup(of: Void.self) { group in
            group.addTask { await session.run() }

            for (index, step) in steps.enumerated() {
                let at = "after step \(index + 1) (\(step))"
                switch step {
                case .app(let appStep):
                    await app.perform(appStep)
                case .subscribe(let channel):
                    guard consumers[channel] == nil, let subscription = try? await session.subscribe(to: "c\(channel)") else { break }
                    let received = Locked([(epoch: Int, sequence: UInt64)]())
                    let task = Task {
                        do {
                            for try await message in subscription {
                                let now = epoch.withLock { $0 }
                                guard let sequence = message.sequence else {
                                    violated("c\(channel): a message without its sequence number on Tether's protocol")
                                    continue
                                }
                                received.withLock { list in
                                    if let last = list.last, last.epoch == now, sequence <= last.sequence {
                                        violated("c\(channel): sequence \(sequence) after \(last.sequence) (duplicate or out of order)")
                                    }
                                    list.append((now, sequence))
                                }
                            }
                        } catch {}
                    }
                    consumers[channel] = (subscription, received, task)
                case .unsubscribe(let channel):
                    if let consumer = consumers.removeValue(forKey: channel) {
                        await session.unsubscribe(from: "c\(channel)")
                        consumer.task.cancel()
                    }
                case .publish(let channel):
                    app.started(Task { _ = try? await session.publish(JSONValue(index), to: "c\(channel)") })
                case .serverPublish(let channel):
                    if (try? await host.server.publish(JSONValue(index), to: "c\(channel)")) == nil { violated("the server refused a publish") }
                case .drop:
                    await host.server.dropAllConnections()
                case .refuse(let on):
                    await host.server.updateFaults { $0.refuseConnections = on }
                case .freeze(let on):
                    await host.server.updateFaults { $0.freeze = on }
                case .delay(let milliseconds):
                    await host.server.updateFaults { $0.frameDelay = .milliseconds(milliseconds) }
                case .rejectCredentials(let on):
                    await host.server.updateFaults { $0.rejectCredentials = on }
                case .close(let code):
                    if (try? await host.server.closeAllConnections(code: CloseCode(code), reason: code == 4429 ? CloseCode.retryAfterReason(.milliseconds(50)) : "chaos")) == nil { violated("chaos chose a close code that must never be sent: \(code)") }
                case .restart:
                    epoch.withLock { $0 += 1 }
                    try? await host.restart()
                }
                try? await Task.sleep(for: settle)

                // Invariants after every step.
                for violation in await app.violationsAfterStep(at) { violated(violation) }
            }

            // Back to normal: every subscription active again, nothing missed.
            await host.server.setFaults(ServerFaults())
            if !(await app.reconnects(within: .seconds(5))) {
                violated("not connected again after the faults cleared (status \(session.status))")
            }
            var finals: [Int: UInt64] = [:]
            for channel in consumers.keys {
                if !(await waitUntil(.seconds(3), { await host.server.subscriberCount(of: "c\(channel)") == 1 })) {
                    violated("c\(channel) is not subscribed again after recovery")
                }
                guard let final = try? await host.server.publish("final", to: "c\(channel)") else {
                    violated("the server refused a publish")
                    continue
                }
                finals[channel] = final
            }
            for (channel, final) in finals {
                guard let consumer = consumers[channel] else { continue }
                let now = epoch.withLock { $0 }
                if !(await waitUntil(.seconds(3), { consumer.received.withLock { $0.contains { $0.epoch == now && $0.sequence == final } } })) {
                    violated("c\(channel): the final message (seq \(final)) never arrived")
                    continue
                }
                // Publishes still leaving the outbox may land after the final one: look up to it.
                let sequences = consumer.received.withLock { $0 }.filter { $0.epoch == now && $0.sequence <= final }.map(\.sequence)
                if let first = sequences.first, sequences != Array(first...final) {
                    let gaps = session.lastRecoveryReport?.gaps ?? []
                    if !gaps.contains("c\(channel)") {
                        violated("c\(channel): delivered \(sequences), expected every one of \(first)...\(final) exactly once")
                    }
                }
            }
            await session.shutdown()
            await group.waitForAll()
        }
        for consumer in consumers.values { consumer.task.cancel() }
        for violation in await app.violationsAtEnd() { violated(violation) }
        return violations.withLock { $0 }
    }
}

/// Runs `work` for at most `timeout`: its answer, or false when time ran out first (the work is
/// then cancelled).
func succeeds(within timeout: Duration, _ work: @escaping @Sendable () async -> Bool) async -> Bool {
    await withTaskGroup(of: Bool.self) { group in
        group.addTask { await work() }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return false
        }
        let first = await group.next() ?? false
        group.cancelAll()
        return first
    }
}

/// Waits until `condition` holds, checking every 10 ms, for at most `timeout`. (A tool against
/// real sockets, not a unit test.)
func waitUntil(_ timeout: Duration, _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return await condition()
}

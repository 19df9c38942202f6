import Foundation
import ConnectionPolicy

extension Session {
    /// Runs the session until ``shutdown()`` or until the calling task is cancelled; either way
    /// it closes its socket, cancels its timers and fails what is pending before it returns.
    /// A second call returns at once.
    public func run() async {
        guard runPhase == .notStarted else { return }
        runPhase = .running
        let stopWatching = OneShot()
        await withDiscardingTaskGroup { group in
            group.forwardChanges(
                of: lifecycleSource, networkMonitor, until: stopWatching,
                appState: { await self.setAppState($0) }, reachable: { await self.setNetworkReachable($0) }
            )
            ensureStarted()
            launchSpawns(into: &group)
            clock.activity?.end()  // begun in init: the session has started
            for await input in inputs {
                handle(input)
                launchSpawns(into: &group)
                inputSink.handled()
            }
            // Shut down, or the task running us was cancelled: from here on every call is refused.
            runPhase = .stopping
            stopWatching.fire()
            endSession()
            launchSpawns(into: &group)
        }
        runPhase = .finished
        statusBroadcaster.finish()
        reportBroadcaster.finish()
        outboxBroadcaster.finish()
    }

    /// Ends the session: closes the socket, cancels every timer, and fails every pending call
    /// with ``SessionError/Code/sessionEnded``. Returns once ``run()`` has returned.
    public func shutdown() async {
        switch runPhase {
        case .notStarted:
            runPhase = .finished
            endSession()
            // Inputs queued for a run that never came: nothing will handle them; nor will the
            // start begun in init come.
            inputSink.finish()
            abandonTrackedWork()
            statusBroadcaster.finish()
            reportBroadcaster.finish()
            outboxBroadcaster.finish()
        case .running:
            runPhase = .stopping
            inputSink.finish()
        case .stopping, .finished:
            break
        }
        if let runner = selfRunner {
            selfRunner = nil
            await runner.value
        }
    }

    /// The one funnel: everything that happens goes through here, one input at a time.
    func handle(_ input: Input) {
        switch input {
        case .opened(let attempt, let connection, let token, let handshake, let settled):
            connectionOpened(attempt: attempt, connection: connection, token: token, handshake: handshake, settled: settled)
        case .openFailed(let attempt, let error):
            openFailed(attempt: attempt, error: error)
        case .transport(let attempt, let event):
            transportEvent(attempt: attempt, event: event)
        case .transportBatch(let attempt, let events):
            // One turn: what the batch makes the machine send leaves in one write.
            // The frames between other events go to the protocol machine together.
            inOneTurn {
                var frames: [TransportFrame] = []
                for event in events {
                    if case .frame(let frame) = event {
                        frames.append(frame)
                        continue
                    }
                    if !frames.isEmpty { received(frames, attempt: attempt) }
                    frames = []
                    transportEvent(attempt: attempt, event: event)
                }
                if !frames.isEmpty { received(frames, attempt: attempt) }
            }
        case .sendFailed(let attempt, let error):
            guard currentAttemptID == attempt else { return }
            if let error = error as? TransportError, error.code == .notConnected {
                // The connection is already gone: its events end with `.closed` (the reader
                // makes sure of it), which says why — a peer's close code, a protocol violation.
                settings.logger.log(.debug, "attempt \(attempt): a send found the connection closed; its close event says why")
                return
            }
            connectionEnded(reason: .error("send failed: \(error)"), disposition: .retry)
        case .timerFired(let key, let serial):
            timerFired(key, serial: serial)
        case .customStepFinished(let id, let serial, let error):
            customStepFinished(id, serial: serial, error: error)
        case .subscriberEnded(let channel, let subscriber):
            removeSubscriber(subscriber, from: channel)
        case .connectWaiterCancelled(let key):
            connectWaiters.removeValue(forKey: key)?.resume(throwing: CancellationError())
        case .publishCancelled(let key):
            withdrawFromOutbox(key)
        case .wake:
            break
        case .appStateReported(let state):
            setAppState(state)
        case .backgroundCloseFlushed(let serial):
            backgroundCloseFlushed(serial: serial)
        case .backgroundTimeExpired(let serial):
            backgroundTimeExpired(serial: serial)
        }
    }

    /// Ends the tracked work of a session that never ran: its queued inputs, the tasks it meant
    /// to spawn, and its start.
    nonisolated func abandonTrackedWork(spawned: Int) {
        inputSink.abandon()
        for _ in 0..<spawned { clock.activity?.end() }
        clock.activity?.end()
    }

    func abandonTrackedWork() {
        let unlaunched = spawns.count
        spawns = []
        abandonTrackedWork(spawned: unlaunched)
    }

    /// Queues work for the run loop to start, and wakes it.
    func spawn(_ work: Spawn) {
        // One unit of work per task until it waits on something outside (see launchSpawns).
        clock.activity?.begin()
        spawns.append(work)
        if spawns.count == 1 { inputSink.yield(.wake) }
    }

    private func launchSpawns(into group: inout DiscardingTaskGroup) {
        guard !spawns.isEmpty else { return }
        let work = spawns
        spawns = []
        let sink = inputSink
        let activity = clock.activity
        for item in work {
            switch item {
            case .open(let attempt, let cancel, let settled, let after, let resuming):
                let transport = self.transport
                let settings = self.settings
                group.addTask {
                    await Self.open(
                        attempt: attempt, cancel: cancel, settled: settled, after: after, resuming: resuming, transport: transport, settings: settings, sink: sink
                    )
                    activity?.end()
                }
            case .read(let attempt, let connection, let cancel):
                // Waiting for the peer is not work; each event a counting connection yielded
                // is, until it is in the funnel.
                let counted = (connection as? any ActivityCountedConnection).flatMap { activity != nil && $0.countedActivity === activity ? $0 : nil }
                activity?.end()
                if let batching = connection as? any EventBatchingConnection, counted == nil {
                    group.addTask {
                        _ = await race({
                            for await batch in batching.eventBatches {
                                guard case .enqueued = sink.yield(.transportBatch(attempt: attempt, events: batch)) else { return }
                                if batch.contains(where: { if case .closed = $0 { true } else { false } }) { return }
                            }
                            if !Task.isCancelled {
                                sink.yield(.transport(attempt: attempt, event: .closed(code: nil, reason: "the transport's events ended")))
                            }
                        }, cancelledBy: cancel)
                    }
                    continue
                }
                group.addTask {
                    _ = await race({
                        for await event in connection.events {
                            defer { counted?.eventRead() }
                            guard case .enqueued = sink.yield(.transport(attempt: attempt, event: event)) else { return }
                            if case .closed = event { return }
                        }
                        // Events that end without `.closed` (a transport breaking its contract)
                        // still end the connection, rather than leave it looking open.
                        if !Task.isCancelled {
                            sink.yield(.transport(attempt: attempt, event: .closed(code: nil, reason: "the transport's events ended")))
                        }
                    }, cancelledBy: cancel)
                    counted?.readingEnded()
                }
            case .write(let attempt, let connection, let frames, let settled):
                // Waiting for frames is not work; each frame queued is (see OutboundSink).
                activity?.end()
                group.addTask {
                    await Self.write(attempt: attempt, connection: connection, frames: frames, settled: settled, sink: sink, activity: activity)
                }
            case .whenFired(let signal, let input):
                group.addTask {
                    await signal.wait()
                    sink.yield(input)
                    activity?.end()
                }
            case .customStep(let id, let serial, let perform, let context, let cancel):
                group.addTask {
                    defer { activity?.end() }
                    let (result, cancelled) = await race({ try await Session.perform(perform, context) }, cancelledBy: cancel)
                    guard !cancelled, let result else { return }
                    switch result {
                    case .success: sink.yield(.customStepFinished(id, serial: serial, error: nil))
                    case .failure(let error): sink.yield(.customStepFinished(id, serial: serial, error: String(describing: error)))
                    }
                }
            case .timer(let key, let serial, let deadline, let cancel):
                let clock = self.clock
                group.addTask {
                    // A tracking clock ends this task's unit while it sleeps, and begins it again
                    // when it wakes.
                    let (result, cancelled) = await race({ try await clock.sleepTracked(until: deadline) }, cancelledBy: cancel)
                    if !cancelled, case .success? = result {
                        sink.yield(.timerFired(key, serial: serial))
                    }
                    activity?.end()
                }
            }
        }
    }

    private static func open(
        attempt: UInt64, cancel: OneShot, settled: OneShot, after: OneShot?, resuming: [WireResume],
        transport: any Transport, settings: AppSettings, sink: InputSink
    ) async {
        // Never two sockets: the previous attempt must have let go of its socket first. And
        // `settled` means "this attempt and every one before it hold no socket": it never fires
        // before `after`, even when this attempt is abandoned while it waits.
        if let after { _ = await race({ await after.wait() }, cancelledBy: cancel) }
        func settle() async {
            await after?.wait()
            settled.fire()
        }
        let wireProtocol = settings.wireProtocol
        let logger = settings.logger
        let (result, cancelled) = await race({
            // A fresh token for every attempt, so an expired one is never reused.
            let token = try await settings.token()
            let handshake = wireProtocol.handshake(endpoint: settings.serverURL, credentials: token, resuming: resuming)
            logger.log(.debug, "attempt \(attempt): opening \(handshake.redacted(handshake.url.absoluteString))")
            do {
                let connection = if let counting = transport as? any ActivityCountingTransport, let activity = sink.activity {
                    try await counting.open(url: handshake.url, headers: handshake.headers, subprotocols: handshake.subprotocols, activity: activity)
                } else if handshake.subprotocols.isEmpty {
                    try await transport.open(url: handshake.url, headers: handshake.headers)
                } else if handshake.requiresSubprotocol {
                    try await transport.open(url: handshake.url, headers: handshake.headers, subprotocols: handshake.subprotocols)
                } else {
                    try await openOffering(handshake, on: transport)
                }
                return (connection, token, handshake)
            } catch {
                // What a transport says about a URL never shows the credentials in it.
                throw handshake.redacted(error)
            }
        }, cancelledBy: cancel)
        switch result {
        case .success((let connection, let token, let handshake)):
            if cancelled {
                await connection.close(code: .normal, reason: "connect cancelled")
                await settle()
            } else if case .enqueued = sink.yield(.opened(attempt: attempt, connection: connection, token: token, handshake: handshake, settled: settled)) {
                // The session owns the socket now; its writer fires `settled` once it is closed.
            } else {
                await connection.close(code: .goingAway, reason: "session ended")
                await settle()
            }
        case .failure(let error):
            await settle()
            if !cancelled { sink.yield(.openFailed(attempt: attempt, error: error)) }
        case nil:
            await settle()
        }
    }

    private static func write(
        attempt: UInt64, connection: any TransportConnection, frames: AsyncStream<Outbound>,
        settled: OneShot, sink: InputSink, activity: (any ActivityTracking)?
    ) async {
        var failed = false
        for await item in frames {
            // Each item was one unit of work from when it was queued until it is written.
            defer { activity?.end() }
            switch item {
            case .frames(let batch):
                guard !failed else { continue }
                do {
                    if batch.count == 1 { try await connection.send(batch[0]) } else { try await connection.send(contentsOf: batch) }
                } catch {
                    failed = true
                    sink.yield(.sendFailed(attempt: attempt, error: error))
                }
            case .close(let code, let reason):
                await connection.close(code: code, reason: reason)
                settled.fire()
                return
            }
        }
        // The stream ended without a close: the session is gone; close anyway.
        await connection.close(code: .goingAway, reason: "session ended")
        settled.fire()
    }

    /// Leaves nothing behind: closes the socket, cancels timers, fails what is pending.
    private func endSession() {
        teardownLink(code: .goingAway, reason: "session ended")
        for timer in timers.values { timer.cancel.fire() }
        timers = [:]
        failAllRequests(SessionError(.sessionEnded, "the session was shut down"), requeuePublishes: false)
        failOutbox(SessionError(.sessionEnded, "the session was shut down"))
        failRefresh(SessionError(.sessionEnded, "the session was shut down"))
        abandonRecovery()
        finishAllSubscribers(throwing: SessionError(.sessionEnded, "the session was shut down"))
        resumeConnectWaiters(with: .failure(SessionError(.sessionEnded, "the session was shut down")))
        statusBroadcaster.set(.disconnected(.sessionEnded))
    }

    /// Opens offering the handshake's subprotocols as an offer only: a transport that cannot
    /// offer subprotocols opens without them (the server then speaks the first version).
    private static func openOffering(_ handshake: Handshake, on transport: any Transport) async throws -> any TransportConnection {
        do {
            return try await transport.open(url: handshake.url, headers: handshake.headers, subprotocols: handshake.subprotocols)
        } catch let error as TransportError where error.code == .unavailable {
            return try await transport.open(url: handshake.url, headers: handshake.headers)
        }
    }
}

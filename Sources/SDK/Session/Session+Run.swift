import Foundation
import ConnectionPolicy

extension Session {
    /// Runs the session until ``shutdown()`` or until the calling task is cancelled; either way
    /// it closes its socket, cancels its timers and fails what is pending before it returns.
    /// A second call returns at once.
    public func run() async {
        await runLoop()
    }

    /// Ends the session: closes the socket, cancels every timer, and fails every pending call
    /// with ``SessionError/Code/sessionEnded``. Returns once ``run()`` has returned.
    public func shutdown() async {
        await shutdownRun()
        if let runner = selfRunner {
            selfRunner = nil
            await runner.value
        }
    }

    /// The one funnel: everything that happens goes through here, one input at a time.
    func handle(_ input: Input) {
        turn.inputs += 1
        switch input {
        case .opened(let attempt, let connection, let token, let handshake, let settled):
            connectionOpened(attempt: attempt, connection: connection, token: token, handshake: handshake, settled: settled)
        case .openFailed(let attempt, let error):
            openFailed(attempt: attempt, error: error)
        case .transport(let attempt, let event):
            transportEvent(attempt: attempt, event: event)
        case .transportBatch(let attempt, let events, let reads):
            // The transport may read on once this read is handled.
            defer { reads.taken(events) }
            turn.reads += 1
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
            guard connection(of: attempt) != nil else { return }
            if let error = error as? TransportError, error.code == .notConnected {
                // The connection is already gone: its events end with `.closed` (the reader
                // makes sure of it), which says why — a peer's close code, a protocol violation.
                settings.logger.log(.debug, "attempt \(attempt): a send found the connection closed; its close event says why")
                return
            }
            connectionEnded(reason: .error("send failed: \(error)"), disposition: .retry)
        case .runtime(let input):
            handleRuntime(input)
        case .customStepFinished(let id, let serial, let error):
            customStepFinished(id, serial: serial, error: error)
        case .subscriberEnded(let channel, let subscriber):
            removeSubscriber(subscriber, from: channel)
        case .publishCancelled(let key):
            withdrawFromOutbox(key)
        case .credentialsFetched(let attempt, let token):
            // The protocol carries it in band where it can; the others use it next time. None
            // (the provider failed or has no token) is an answer too: a protocol that asked
            // for one ends what needed it.
            guard connection(of: attempt) != nil else { return }
            perform(.credentials(token))
        case .storeWritten(let error):
            storeWritten(error)
        case .batchFinished(let channel):
            advanceFinished(channel)
        case .subscriberDrained(let channel, let subscriber):
            subscriberDrained(subscriber, on: channel)
        }
    }

    /// The inputs the funnel took so far, and how many of them were a socket's reads: what the
    /// run loop's wake-ups per read are counted from.
    package var funnelCounts: (inputs: Int, reads: Int) { (turn.inputs, turn.reads) }

    func runStarting() {
        ensureStarted()
    }

    func runFinished() {
        closeStore()
        reportBroadcaster.finish()
        outboxBroadcaster.finish()
        storeStatusBroadcaster.finish()
        storeLossBroadcaster.finish()
        earlierOutcomeBroadcaster.finish()
    }

    /// Queues the child task that carries out `work` (see ``ControlRuntimeHost/spawn(counted:_:)``).
    func spawn(_ work: Spawn) {
        let sink = inputSink
        let activity = clock.activity
        switch work {
        case .open(let attempt, let cancel, let settled, let after, let resuming, let state):
            let (transport, settings) = (transport, settings)
            spawn {
                await Self.open(
                    attempt: attempt, cancel: cancel, settled: settled, after: after, resuming: resuming, continuing: state, transport: transport, settings: settings, sink: sink
                )
            }
        case .read(let attempt, let connection, let cancel):
            // Waiting for the peer is not work; each event a counting connection yielded
            // is, until it is in the funnel.
            let report = EventReadReport(connection, on: clock)
            if let batching = connection as? any EventBatchingConnection, !report.isCounting {
                // Each read goes into the funnel from the transport's own thread: no task in
                // between. What the funnel holds of this socket's reads is bounded by the
                // transport, which stops reading from the socket until the session has taken
                // enough (TCP holds the server back); nothing is dropped.
                // The closure does not hold the outlet (which holds it): the input names it, and
                // a `false` says the session is gone.
                let reads = batching.reads
                reads.attach { [unowned reads] batch in
                    if case .enqueued = sink.yield(.transportBatch(attempt: attempt, events: batch, from: reads)) { return true }
                    return false
                }
                return
            }
            spawn(counted: false) {
                _ = await race({
                    for await event in connection.events {
                        defer { report.eventRead() }
                        guard case .enqueued = sink.yield(.transport(attempt: attempt, event: event)) else { return }
                        if case .closed = event { return }
                    }
                    // Events that end without `.closed` (a transport breaking its contract)
                    // still end the connection, rather than leave it looking open.
                    if !Task.isCancelled {
                        sink.yield(.transport(attempt: attempt, event: .closed(code: nil, reason: "the transport's events ended")))
                    }
                }, cancelledBy: cancel)
                report.readingEnded()
            }
        case .write(let attempt, let connection, let frames, let settled):
            // Waiting for frames is not work; each frame queued is (see OutboundSink).
            spawn(counted: false) {
                await Self.write(attempt: attempt, connection: connection, frames: frames, settled: settled, sink: sink, activity: activity)
            }
        case .customStep(let id, let serial, let perform, let context, let cancel):
            spawn {
                let (result, cancelled) = await race({ try await Session.perform(perform, context) }, cancelledBy: cancel)
                guard !cancelled, let result else { return }
                switch result {
                case .success: sink.yield(.customStepFinished(id, serial: serial, error: nil))
                case .failure(let error): sink.yield(.customStepFinished(id, serial: serial, error: String(describing: error)))
                }
            }
        case .storeWriter(let store, let writes):
            // Waiting for a batch is not work; each batch handed over is (see writeIfIdle).
            spawn(counted: false) { await Self.writeStore(store, writes, sink: sink, activity: activity) }
        }
    }

    private static func open(
        attempt: UInt64, cancel: OneShot, settled: OneShot, after: OneShot?, resuming: [WireResume], continuing state: WireSessionState?,
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
            let handshake = wireProtocol.handshake(endpoint: settings.serverURL, credentials: token, resuming: resuming, continuing: state)
            logger.log(.debug, "attempt \(attempt): opening \(handshake.redacted(handshake.url.absoluteString))")
            do {
                let connection = if handshake.subprotocols.isEmpty {
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

    /// Leaves nothing behind: closes the socket, fails what is pending (the runtime then cancels
    /// the timers and fails `connect()`).
    func endHost() {
        teardownLink(code: .goingAway, reason: "session ended")
        failAllRequests(SessionError(.sessionEnded, "the session was shut down"), requeuePublishes: false)
        failOutbox(SessionError(.sessionEnded, "the session was shut down"))
        failRefresh(SessionError(.sessionEnded, "the session was shut down"))
        abandonRecovery()
        finishAllSubscribers(throwing: SessionError(.sessionEnded, "the session was shut down"))
        finishStoreWrites()
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

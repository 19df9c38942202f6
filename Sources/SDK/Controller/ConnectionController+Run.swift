import ConnectionPolicy

extension ConnectionController {
    /// Everything that happens to a controller, funnelled into ``handle(_:)``.
    enum Input: Sendable {
        case report(ConnectionAttempt, ConnectionAttempt.Report)
        case timerFired(ControlTimer, serial: UInt64)
        case connectWaiterCancelled(UInt64)
        case appStateReported(AppLifecycleState)
        case backgroundCloseDone(serial: UInt64)
        case backgroundTimeExpired(serial: UInt64)
        /// Work was queued for the run loop to start.
        case wake
    }

    /// Work that needs a child task of `run()`.
    enum Spawn: Sendable {
        case open(ConnectionAttempt, cancel: OneShot, after: OneShot?)
        case close(ConnectionAttempt, closed: OneShot)
        case timer(ControlTimer, serial: UInt64, deadline: SessionClock.Instant, cancel: OneShot)
        case whenFired(OneShot, then: Input)
    }

    /// Runs the controller until ``shutdown()`` or until the calling task is cancelled; either
    /// way it closes the connection and cancels its timers before it returns. A second call
    /// returns at once.
    public func run() async {
        guard runPhase == .notStarted else { return }
        runPhase = .running
        let stopWatching = OneShot()
        await withDiscardingTaskGroup { group in
            group.forwardChanges(
                of: lifecycleSource, networkMonitor, until: stopWatching,
                appState: { await self.setAppState($0) }, reachable: { await self.setNetworkReachable($0) }
            )
            perform(control.start())
            launchSpawns(into: &group)
            for await input in inputs {
                handle(input)
                launchSpawns(into: &group)
                inputSink.handled()
            }
            runPhase = .stopping
            stopWatching.fire()
            end()
            launchSpawns(into: &group)
        }
        runPhase = .finished
        statusBroadcaster.finish()
        runEnded.fire()
    }

    /// Ends the controller: closes the connection, cancels every timer, fails what waits.
    /// Returns once ``run()`` has let go of everything (at once when it never ran).
    public func shutdown() async {
        switch runPhase {
        case .notStarted:
            runPhase = .finished
            end()
            // Inputs queued for a run that never came: nothing will handle them.
            inputSink.finish()
            inputSink.abandon()
            statusBroadcaster.finish()
        case .running:
            runPhase = .stopping
            inputSink.finish()
            await runEnded.wait()
        case .stopping:
            await runEnded.wait()
        case .finished:
            break
        }
    }

    func handle(_ input: Input) {
        switch input {
        case .report(let attempt, let report):
            reported(report, on: attempt)
        case .timerFired(let timer, let serial):
            guard let armed = timers[timer], armed.serial == serial else { return }
            timers[timer] = nil
            perform(control.timerFired(timer))
        case .connectWaiterCancelled(let key):
            connectWaiters.removeValue(forKey: key)?.resume(throwing: CancellationError())
        case .appStateReported(let state):
            setAppState(state)
        case .backgroundCloseDone(let serial):
            if backgroundTime.closeDone(serial: serial) { reconcileBackgroundTime() }
        case .backgroundTimeExpired(let serial):
            guard backgroundTime.expired(serial: serial) else { return }
            logger.log(.notice, "the OS took back the background time: closing the connection before the app is suspended")
            if let attempt = control.phase.attempt {
                lose(attempt, .backgroundTimeExpired, .retry)
            }
        case .wake:
            break
        }
    }

    private func reported(_ report: ConnectionAttempt.Report, on handle: ConnectionAttempt) {
        let attempt = handle.id
        switch report {
        case .opened:
            if live?.handle.id == attempt, case .opening = control.phase { live?.since = clock.now }
            perform(control.opened(attempt), reporter: handle)
        case .lost(let reason, let disposition):
            lose(attempt, reason, disposition)
        case .failed(let error):
            let disposition = classify(error)
            lose(attempt, .error(String(describing: error)), disposition)
        }
    }

    /// `attempt` is gone: let go of it (its client still closes it) and tell the state machine.
    func lose(_ attempt: UInt64, _ reason: DisconnectReason, _ disposition: RetryDisposition) {
        guard control.phase.attempt == attempt else {
            logger.log(.debug, "attempt \(attempt): a report after it ended (\(reason)); ignored")
            return
        }
        let uptime = live?.since.map { clock.elapsed(since: $0) }
        logger.log(.info, "connection lost: \(reason) (\(disposition))")
        release(attempt)
        perform(control.lost(attempt, reason: reason, disposition: disposition, uptime: uptime))
    }

    /// Closes `attempt`'s connection (cancelling its open) unless it was released already.
    func release(_ attempt: UInt64) {
        guard let current = live, current.handle.id == attempt else { return }
        live = nil
        current.cancel.fire()
        spawn(.close(current.handle, closed: current.closed))
    }

    /// Carries out the state machine's effects in order; `reporter` is the attempt whose report
    /// they answer (to close it by the object the client holds, when it is no longer current).
    func perform(_ effects: [ControlEffect], reporter: ConnectionAttempt? = nil) {
        for effect in effects {
            switch effect {
            case .open(let attempt):
                let sink = inputSink
                let handle = ConnectionAttempt(id: attempt) { handle, report in sink.yield(.report(handle, report)) }
                let record = LiveAttempt(handle: handle, cancel: OneShot(), closed: OneShot())
                spawn(.open(handle, cancel: record.cancel, after: lastClosed))
                lastClosed = record.closed
                live = record
            case .teardown(let attempt, let cause):
                if live?.handle.id == attempt {
                    release(attempt)
                } else if let reporter, reporter.id == attempt {
                    // Opened after it was given up: close it at once.
                    spawn(.close(reporter, closed: OneShot()))
                }
                logger.log(.debug, "attempt \(attempt): let go (\(cause))")
            case .connectTimedOut(let attempt, let reason):
                lose(attempt, reason, .retry)
            case .policyClosed:
                break
            case .arm(let timer, let delay):
                cancelTimer(timer)
                let armed = ArmedTimer(serial: makeSerial(), cancel: OneShot())
                timers[timer] = armed
                spawn(.timer(timer, serial: armed.serial, deadline: clock.deadline(after: delay), cancel: armed.cancel))
            case .cancel(let timer):
                cancelTimer(timer)
            case .status(let status):
                setStatus(status)
            case .log(let level, let text):
                logger.log(level, text)
            }
        }
    }

    func cancelTimer(_ timer: ControlTimer) {
        timers.removeValue(forKey: timer)?.cancel.fire()
    }

    func spawn(_ work: Spawn) {
        spawns.append(work)
        if spawns.count == 1 { inputSink.yield(.wake) }
    }

    private func launchSpawns(into group: inout DiscardingTaskGroup) {
        guard !spawns.isEmpty else { return }
        let work = spawns
        spawns = []
        let sink = inputSink
        let connection = self.connection
        let closeLimit = connectTimeout
        let clock = self.clock
        let logger = self.logger
        let activity = clock.activity
        for item in work {
            switch item {
            case .open(let handle, let cancel, let after):
                group.addTask {
                    // Never two: the previous attempt's connection is closed first.
                    if let after { _ = await race({ await after.wait() }, cancelledBy: cancel) }
                    let (result, cancelled) = await race({ try await connection.open(handle) }, cancelledBy: cancel)
                    if !cancelled, case .failure(let error)? = result { handle.lost(error) }
                }
            case .close(let handle, let closed):
                group.addTask {
                    // A close that never returns must not hold every later attempt back.
                    let done = OneShot()
                    let (_, gaveUp) = await race({
                        await connection.close(handle)
                        done.fire()
                    }, cancelledBy: Self.deadline(closeLimit, on: clock, unless: done))
                    if gaveUp { logger.log(.warning, "\(handle): close did not return within \(closeLimit); opening the next attempt anyway") }
                    closed.fire()
                }
            case .timer(let timer, let serial, let deadline, let cancel):
                // With a tracking clock the task is a unit of work until it sleeps, and again
                // from its wake-up until its fire is in the funnel: a test clock's settle()
                // returns only once the fire is handled.
                activity?.begin()
                group.addTask {
                    let (result, cancelled) = await race({ try await clock.sleepTracked(until: deadline) }, cancelledBy: cancel)
                    if !cancelled, case .success? = result { sink.yield(.timerFired(timer, serial: serial)) }
                    activity?.end()
                }
            case .whenFired(let signal, let input):
                group.addTask {
                    await signal.wait()
                    sink.yield(input)
                }
            }
        }
    }

    /// Leaves nothing behind: closes the connection, cancels timers, fails what waits.
    private func end() {
        if let attempt = live?.handle.id { release(attempt) }
        for timer in timers.values { timer.cancel.fire() }
        timers = [:]
        resumeConnectWaiters(with: .failure(SessionError(.sessionEnded, "the controller was shut down")))
        statusBroadcaster.set(.disconnected(.sessionEnded))
    }

    /// Holds background time exactly while the link needs it.
    func reconcileBackgroundTime() {
        let facts = BackgroundTimeKeeper.Facts(
            isForeground: control.lifecycle.isForeground, isLinked: control.phase != .idle, isFinished: runPhase == .finished, lastClosed: lastClosed
        )
        let sink = inputSink
        for step in backgroundTime.reconcile(facts, expired: { serial in sink.yield(.backgroundTimeExpired(serial: serial)) }) {
            switch step {
            case .watchClose(let closed, let serial):
                spawn(.whenFired(closed, then: .backgroundCloseDone(serial: serial)))
            case .log(let text):
                logger.log(.debug, text)
            }
        }
    }
}

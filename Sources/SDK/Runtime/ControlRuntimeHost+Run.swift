import ConnectionPolicy

extension ControlRuntimeHost {
    /// The run loop: forwards the platform's changes, then handles every input in turn, starting
    /// the child tasks each turn queued, until the input stream ends (``shutdownRun()``) or the
    /// calling task is cancelled; then lets go of everything. A second call returns at once.
    func runLoop() async {
        guard runtime.runPhase == .notStarted else { return }
        runtime.runPhase = .running
        let stopWatching = OneShot()
        await withDiscardingTaskGroup { group in
            group.forwardChanges(
                of: lifecycleSource, networkMonitor, conditionsSource, until: stopWatching,
                appState: { await self.setAppState($0) }, reachable: { await self.setNetworkReachable($0) },
                conditions: { await self.conditionsReported($0) }
            )
            runStarting()
            launchQueued(into: &group)
            clock.activity?.end()  // begun when the host was made: it has started
            for await input in inputs {
                let wasLinked = isLinked
                handle(input)
                if isLinked != wasLinked { reconcileBackgroundTime() }
                launchQueued(into: &group)
                inputSink.handled()
            }
            // Shut down, or the task running us was cancelled: from here on every call is refused.
            runtime.runPhase = .stopping
            stopWatching.fire()
            endRun()
            launchQueued(into: &group)
        }
        runtime.runPhase = .finished
        reconcileBackgroundTime()
        statusBroadcaster.finish()
        runFinished()
        runEnded.fire()
    }

    /// Ends the run: returns once ``runLoop()`` has let go of everything (at once when it never
    /// ran: what was queued for it is abandoned).
    func shutdownRun() async {
        switch runtime.runPhase {
        case .notStarted:
            runtime.runPhase = .finished
            endRun()
            // Inputs queued for a run that never came: nothing will handle them; nor will the
            // start begun when the host was made come.
            inputSink.finish()
            runtime.abandon(inputs: inputSink, activity: clock.activity)
            runtime.queued = []
            reconcileBackgroundTime()
            statusBroadcaster.finish()
            runFinished()
            runEnded.fire()
        case .running:
            runtime.runPhase = .stopping
            inputSink.finish()
            await runEnded.wait()
        case .stopping:
            await runEnded.wait()
        case .finished:
            break
        }
    }

    /// Leaves nothing behind: the host lets go of its connection and calls, every timer is
    /// cancelled, every `connect()` fails.
    private func endRun() {
        endHost()
        for timer in runtime.timers.values { timer.cancel.fire() }
        runtime.timers = [:]
        diagnostics.update { $0.armedTimers = [] }
        resumeConnectWaiters(with: .failure(SessionError(.sessionEnded, "the \(Self.noun) was shut down")))
        statusBroadcaster.set(.disconnected(.sessionEnded))
    }

    /// Queues a child task for the run loop, and wakes it. `counted`: a unit of work for a
    /// tracking clock from now until `body` returns.
    func spawn(counted: Bool = true, _ body: @escaping @Sendable () async -> Void) {
        if counted { clock.activity?.begin() }
        runtime.queued.append(RuntimeWork(counted: counted, body: body))
        if runtime.queued.count == 1 { inputSink.yield(Self.input(.wake)) }
    }

    private func launchQueued(into group: inout DiscardingTaskGroup) {
        guard !runtime.queued.isEmpty else { return }
        let work = runtime.queued
        runtime.queued = []
        let activity = clock.activity
        for item in work {
            group.addTask {
                await item.body()
                if item.counted { activity?.end() }
            }
        }
    }
}

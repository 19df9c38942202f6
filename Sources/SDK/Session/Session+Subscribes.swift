import ConnectionPolicy

extension Session {
    /// Sends a subscribe for `channel`; with `requiringState`, only when the session holds the
    /// channel (false when it does not: a replayed step whose channel was let go).
    /// `behindCredentials`: sent while the credentials await their answer, outside the replay:
    /// its time starts counting after the connect timeout's, so that an attempt that fails to
    /// connect is what ends it (the next connection's replay has it), never its own timeout.
    /// `deadline`: the request deadline, when the caller (a replay of many) already has it.
    @discardableResult
    func sendSubscribe(_ channel: String, behindCredentials: Bool = false, requiringState: Bool = false, deadline: SessionClock.Instant? = nil) -> Bool {
        var commands: [WireCommand] = []
        guard prepareSubscribe(channel, behindCredentials: behindCredentials, requiringState: requiringState, deadline: deadline, into: &commands) else {
            return false
        }
        perform(contentsOf: commands)
        return true
    }

    /// A replay's subscribes, in order, given to the protocol's machine in one call
    /// (``perform(contentsOf:)``). The steps whose channel the session no longer holds.
    func sendSubscribes(_ steps: [(id: RecoveryStepID, channel: String)], deadline: SessionClock.Instant) -> [RecoveryStepID] {
        var commands: [WireCommand] = []
        commands.reserveCapacity(steps.count)
        var unsent: [RecoveryStepID] = []
        for step in steps where !prepareSubscribe(step.channel, requiringState: true, deadline: deadline, into: &commands) {
            unsent.append(step.id)
        }
        perform(contentsOf: commands)
        return unsent
    }

    /// Records a subscribe for `channel` (its request, its deadline) and appends the commands
    /// that make it: the subscribe, then the presence the app tracks on it (announced with the
    /// join's answer, ahead of the outbox). `false`: nothing to send.
    private func prepareSubscribe(
        _ channel: String, behindCredentials: Bool = false, requiringState: Bool, deadline: SessionClock.Instant?, into commands: inout [WireCommand]
    ) -> Bool {
        guard let connection = link.connection else { return false }
        // Read in place, in one access: reading the dictionary's values by index copied the
        // whole state out for each field.
        var topic = Topic(channel, options: nil)
        var resume: StreamPosition?
        var tracked: JSONValue?
        if let index = channels.index(forKey: channel) {
            (topic, resume, tracked) = channels.values[index].update { state in
                (Topic(channel, options: state.options), resumePosition(of: state), state.tracked)
            }
        } else if requiringState {
            return false
        }
        let id = makeRequestID()
        connection.channels.sent(id, for: channel)
        let timeout = behindCredentials ? settings.connectTimeout + settings.requestTimeout : settings.requestTimeout
        let due = behindCredentials ? clock.deadline(after: timeout) : deadline ?? clock.deadline(after: timeout)
        apply(connection.subscribeDeadlines.add(id, deadline: due, timeout: timeout, remaining: timeout), to: .subscribes)
        commands.append(.subscribe(id, topic, resume: resume))
        if let tracked { commands.append(.presence(nil, topic, state: tracked)) }
        return true
    }
}

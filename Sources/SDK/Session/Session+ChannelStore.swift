extension Session {
    /// Records in the store where `channel` stands and where the app finished it, or that it is
    /// no longer held, if that changed.
    func storeChannel(_ channel: String) {
        guard let link = storeLink else { return }
        guard let state = channels[channel] else {
            if link.folded.positions[channel] != nil { record([.channelDropped(channel: channel)]) }
            return
        }
        var changes: [StoreRecord] = []
        // How far any launch was handed: while a relaunch brings again what the killed one was
        // handed, that stays the mark (a second kill meanwhile must flag them still).
        let handed = state.redeliverUntil ?? state.position
        if link.folded.positions[channel] != .some(handed) { changes.append(.position(channel: channel, position: handed)) }
        if let finished = state.finished, link.folded.finished[channel] != finished {
            changes.append(.finished(channel: channel, position: finished, at: Self.wallClockMilliseconds()))
        }
        record(changes)
    }

    /// The app finished a batch of `channel`: where every subscriber has finished moves on, and
    /// the store keeps it.
    func advanceFinished(_ channel: String) {
        guard storeLink != nil, var state = channels[channel], !state.unfinished.isEmpty else { return }
        let done = state.subscribers.values.map(\.finishedIndex).min() ?? state.handedOver
        let count = state.unfinished.prefix { $0.index <= done }.count
        guard count > 0 else { return }
        state.finished = state.unfinished[count - 1].position
        state.unfinished.removeFirst(count)
        channels[channel] = state
        storeChannel(channel)
        acknowledgeFinished(channel, through: state.finished)
    }

    /// Records the open socket's protocol session state, if it changed since the store last had
    /// it (``WireCapabilities/sessionStateTracksDeliveries``).
    func storeWireState() {
        guard let state = link.connection?.machine?.durableSessionState, state != storeLink?.folded.wireState else { return }
        record([.wireState(state)])
    }

    /// Tells a protocol that acknowledges what the app finished (MQTT QoS 1) how far the app got
    /// on `channel`: with a store, when the app finishes a batch; without one, as it is handed
    /// over (nothing outlives the process to bring it again).
    func acknowledgeFinished(_ channel: String, through position: StreamPosition?) {
        guard settings.wireProtocol.capabilities.acknowledgesWhenFinished, let position,
            let id = link.connection?.channels.subscription(of: channel)
        else { return }
        perform(.finished(id, through: position))
    }
}

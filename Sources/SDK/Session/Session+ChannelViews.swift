extension Session {
    /// The channels the app holds, with the last sequence number delivered on each (read
    /// without `await`; `nil` where the protocol does not number messages).
    public nonisolated var subscribedChannels: [String: UInt64?] { diagnostics.current.channels.mapValues { $0?.sequence } }

    /// The channels the app holds, with where each one's stream stands (the last message
    /// delivered, or where the server said it began; `nil` before either), in the protocol's own
    /// terms: what a resubscribe asks from. Read without `await`.
    public nonisolated var channelPositions: [String: StreamPosition?] { diagnostics.current.channels }

    /// Brings ``subscribedChannels`` up to date for one channel (not a copy of them all: a
    /// replay acknowledges every channel in turn).
    func mirrorChannel(_ channel: String) {
        // Read in place (`channels[channel].map` copied the whole state out for one field);
        // `nil` for a channel let go, which leaves the mirror.
        var state: StreamPosition?? = nil
        if let index = channels.index(forKey: channel) { state = .some(channels.values[index].update { $0.position }) }
        diagnostics.update { $0.channels[channel] = state }
        storeChannel(channel)
    }

    /// Brings ``subscribedChannels`` up to date after the set of channels changed.
    func mirrorChannels() {
        // A closure, not the key path `\.position`: the key path's generic projection copied
        // each whole state out (a retain of each of its references) to read one field.
        let snapshot = channels.mapValues { $0.position }
        diagnostics.update { $0.channels = snapshot }
    }
}

import SDK

/// How many bytes of frames the bridge has handed over that the connection's reader has not
/// taken yet. Past ``highWater`` the bridge stops reading from the socket — TCP's own flow
/// control then holds the server back, and nothing is dropped — until the reader has taken
/// enough to be at half of it.
final class ReadGate: Sendable {
    let highWater: Int
    private let state = Locked(State())

    private struct State {
        var pending = 0
        var holding = false
        var onRoom: (@Sendable () -> Void)?
    }

    init(highWater: Int) {
        self.highWater = highWater
    }

    /// The bytes handed over and not taken.
    var pending: Int { state.withLock { $0.pending } }

    /// What to call (from any thread) when a held read may go on; `nil` to let it go.
    func onRoom(_ body: (@Sendable () -> Void)?) {
        state.withLock { $0.onRoom = body }
    }

    /// The bridge handed `bytes` over.
    func handedOver(_ bytes: Int) {
        state.withLock { $0.pending += bytes }
    }

    /// Indicates that the bridge may read from the socket now; when not, the read is held until
    /// the reader has taken enough (``onRoom(_:)``).
    func mayRead() -> Bool {
        state.withLock { state in
            guard state.pending > highWater else { return true }
            state.holding = true
            return false
        }
    }

    /// The reader took `bytes`.
    func taken(_ bytes: Int) {
        let resume = state.withLock { state -> (@Sendable () -> Void)? in
            state.pending = max(0, state.pending - bytes)
            guard state.holding, state.pending <= highWater / 2 else { return nil }
            state.holding = false
            return state.onRoom
        }
        resume?()
    }
}

import ConnectionPolicy

extension Session {
    /// Everything that lives and dies with one socket: the attempt it belongs to, its writer,
    /// its protocol machine, what the machine confirmed or was asked on it, and the frames of
    /// the current turn. Carried by the link's connected cases (``Link``); letting the socket
    /// go is dropping this value, so nothing of an earlier socket can reach the next one.
    ///
    /// A class, held only inside the session's actor (never sent), so that the session changes
    /// it in place wherever the link holds it.
    final class Connection {
        let attempt: Attempt
        let socket: any TransportConnection
        let outbound: OutboundSink
        /// The protocol machine, made fresh for this socket. `nil` only while it runs
        /// (``Session/withMachine(_:)``).
        var machine: (any WireMachine)?
        /// The subscribes sent and the subscriptions confirmed on this socket.
        var channels = SocketChannels()
        /// Frames the machine produced in the current turn, not yet handed to the writer.
        var pendingFrames: [TransportFrame] = []
        /// The replay went out behind the credentials, before the server answered them.
        var pipelining = false
        /// App-defined steps whose turn came while pipelining: they run once authenticated.
        var heldCustomRuns: [(RecoveryStepID, attempt: Int)] = []

        init(attempt: Attempt, socket: any TransportConnection, outbound: OutboundSink, machine: any WireMachine) {
            self.attempt = attempt
            self.socket = socket
            self.outbound = outbound
            self.machine = machine
        }

        /// Hands the frames of the turn to the writer, as one batch.
        func flushFrames() {
            guard !pendingFrames.isEmpty else { return }
            let frames = pendingFrames
            pendingFrames = []
            outbound.yield(.frames(frames))
        }
    }

    /// What the session is doing with its socket.
    enum Link {
        /// No socket, none opening.
        case idle
        /// An attempt is opening its socket.
        case opening(Attempt)
        /// The socket is open; the protocol's handshake (the credentials) is under way.
        case authenticating(Connection)
        /// Open and authenticated since `since`.
        case open(Connection, since: SessionClock.Instant)

        /// The open socket's value, in either connected case.
        var connection: Connection? {
            switch self {
            case .idle, .opening: nil
            case .authenticating(let connection), .open(let connection, _): connection
            }
        }

        /// The attempt this link belongs to (`nil` when idle).
        var attemptID: UInt64? {
            switch self {
            case .idle: nil
            case .opening(let attempt): attempt.id
            case .authenticating(let connection), .open(let connection, _): connection.attempt.id
            }
        }
    }

    /// One attempt to connect.
    struct Attempt {
        let id: UInt64
        /// Fired to abandon the attempt.
        let cancel: OneShot
        /// Fired once the attempt holds no socket any more.
        let settled: OneShot
    }
}

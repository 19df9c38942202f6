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
        /// The deadlines of the subscribes in flight (timer `.subscribes`).
        var subscribeDeadlines = Deadlines()
        /// The replay of the journal on this socket, until the recovery is complete.
        var replay: SocketReplay?
        /// Frames the machine produced in the current turn, not yet handed to the writer.
        var pendingFrames: [TransportFrame] = []
        /// The replay went out behind the credentials, before the server answered them.
        var pipelining = false
        /// App-defined steps whose turn came while pipelining: they run once authenticated.
        var heldCustomRuns: [(RecoveryStepID, attempt: Int)] = []
        /// When the last read from the server came, and when frames last went to the writer:
        /// what the heartbeat reads to skip a ping the traffic made needless.
        var lastInbound: SessionClock.Instant?
        var lastOutbound: SessionClock.Instant?

        init(attempt: Attempt, socket: any TransportConnection, outbound: OutboundSink, machine: any WireMachine) {
            self.attempt = attempt
            self.socket = socket
            self.outbound = outbound
            self.machine = machine
        }

        /// Lets the socket go: the turn's frames and then a close go to the writer, the attempt
        /// is cancelled, and so are the app's recovery steps running for it. Its timers are the
        /// session's to drop (``Session/dropSocketTimers(of:)``).
        func close(_ code: CloseCode, reason: String) {
            flushFrames()
            attempt.cancel.fire()
            outbound.yield(.close(code, reason: reason))
            outbound.finish()
            replay?.cancelRuns()
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

    /// The replay of the journal on one socket, with what the recovery waits for on it: each
    /// channel's catch-up, the outbox publishes sent, the app's steps running. The recovery
    /// itself (its trigger, attempts, counts) outlives the socket; this does not.
    struct SocketReplay {
        var plan: ReplayPlan
        /// Per channel, the position the catch-up must reach.
        var targets: [String: StreamPosition] = [:]
        /// Outbox publishes sent and not yet acknowledged.
        var flushing: Set<RequestID> = []
        /// App-defined steps running now, by the serial of their run.
        var customRuns: [RecoveryStepID: (serial: UInt64, cancel: OneShot)] = [:]

        /// Indicates that the replay, the catch-ups and the outbox flush are all done.
        var isSettled: Bool { plan.isFinished && targets.isEmpty && flushing.isEmpty }

        /// A run of `channel`'s messages was delivered: how many of them the channel missed (at
        /// or before its target), and whether one reached the target (the channel's catch-up is
        /// done; what comes after it in the run was not missed). One lookup for the run, none
        /// when no catch-up is awaited.
        mutating func counted(_ run: [ChannelMessage], on channel: String) -> (missed: Int, reached: Bool) {
            guard !targets.isEmpty, let target = targets[channel] else { return (0, false) }
            var missed = 0
            for message in run {
                guard let position = message.position else { continue }
                if target.isAtOrPast(position) == true { missed += 1 }
                if position.isAtOrPast(target) == true {
                    targets[channel] = nil
                    return (missed, true)
                }
            }
            return (missed, false)
        }

        /// Feeds the plan an event, in place: what to carry out.
        mutating func feed(_ event: (inout ReplayPlan) -> [ReplayPlan.Action]) -> [ReplayPlan.Action] { event(&plan) }

        /// Cancels the app's steps running (their socket is gone, or the recovery).
        mutating func cancelRuns() {
            for run in customRuns.values { run.cancel.fire() }
            customRuns = [:]
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

import ConnectionPolicy

extension Session {
    /// Everything that happens to a session, funnelled into ``Session/handle(_:)``: children of
    /// `run()` only forward these, and host calls go through the same function.
    enum Input: Sendable {
        /// An attempt opened its socket.
        case opened(attempt: UInt64, connection: any TransportConnection, token: Secret?, handshake: Handshake, settled: OneShot)
        /// An attempt failed before its socket was open.
        case openFailed(attempt: UInt64, error: any Error)
        /// The connection of an attempt reported something.
        case transport(attempt: UInt64, event: TransportEvent)
        /// What one read of an ``EventBatchingConnection`` brought, in order; it is taken from
        /// `reads` once handled (the transport then reads on).
        case transportBatch(attempt: UInt64, events: [TransportEvent], from: BatchOutlet)
        /// Sending on the connection of an attempt failed.
        case sendFailed(attempt: UInt64, error: any Error)
        /// A timer fired, a `connect()` was cancelled, work was queued, the app reported its
        /// state, the background time's close was done or expired: the runtime's to handle.
        case runtime(RuntimeInput<TimerKey>)
        /// An app-defined recovery step's run ended (`error` is `nil` on success).
        case customStepFinished(RecoveryStepID, serial: UInt64, error: String?)
        /// A subscriber stopped listening.
        case subscriberEnded(channel: String, subscriber: UInt64)
        /// A task whose publish waits in the outbox was cancelled.
        case publishCancelled(UInt64)
        /// The token provider answered for the open connection of `attempt`
        /// (``Session/credentialsChanged()``).
        case credentialsFetched(attempt: UInt64, token: Secret?)
        /// The app finished a batch of a channel's messages (asked for the next after its last).
        case batchFinished(channel: String)
        /// A subscriber held back at its bound read down to half of what it holds.
        case subscriberDrained(channel: String, subscriber: UInt64)
        /// The store's writer finished a batch (`nil`: written).
        case storeWritten(SessionStoreError?)
    }

    /// The timers a session arms: the policy's, and its own for deadlines.
    enum TimerKey: Hashable, Sendable {
        case policy(TimerID)
        case connectTimeout
        /// The earliest of the pending requests' deadlines (one timer for them all).
        case requests
        case outboxDeadline
        case refreshDeadline
        case subscriberStall
        /// A timer of one socket (its attempt's id), dropped with it.
        case socket(UInt64, SocketTimer)

        /// The attempt of a socket's timer.
        var attempt: UInt64? {
            if case .socket(let attempt, _) = self { attempt } else { nil }
        }

        /// How diagnostics name it.
        var sessionTimer: SessionTimer {
            switch self {
            case .policy(let id): .policy(id)
            case .connectTimeout: .connectTimeout
            case .requests: .request
            case .outboxDeadline: .outbox
            case .refreshDeadline: .refresh
            case .subscriberStall: .subscriberStall
            case .socket(_, let timer): timer.sessionTimer
            }
        }

        init(_ timer: ControlTimer) {
            switch timer {
            case .policy(let id): self = .policy(id)
            case .connectTimeout: self = .connectTimeout
            }
        }
    }

    /// The timers that live and die with one socket.
    enum SocketTimer: Hashable, Sendable {
        /// The session's next ping.
        case heartbeat
        /// The earliest deadline of the subscribes in flight (one timer for them all).
        case subscribes
        /// An app-defined recovery step's run.
        case recoveryStep(RecoveryStepID)
        /// A timer the protocol machine asked for (a server-heartbeat watchdog).
        case wire(String)

        /// How diagnostics name it.
        var sessionTimer: SessionTimer {
            switch self {
            case .heartbeat: .heartbeat
            case .subscribes: .request
            case .recoveryStep: .recoveryStep
            case .wire(let name): .protocolTimer(name)
            }
        }
    }

    /// Work that needs a child task of `run()`.
    enum Spawn: Sendable {
        case open(attempt: UInt64, cancel: OneShot, settled: OneShot, after: OneShot?, resuming: [WireResume], continuing: WireSessionState?)
        case read(attempt: UInt64, connection: any TransportConnection, cancel: OneShot)
        case write(attempt: UInt64, connection: any TransportConnection, frames: AsyncStream<Outbound>, settled: OneShot)
        case customStep(RecoveryStepID, serial: UInt64, perform: @Sendable (RecoveryStepContext) async throws -> Void, context: RecoveryStepContext, cancel: OneShot)
        case storeWriter(any SessionStore, AsyncStream<StoreWrite>)
    }

    /// What the writer of a connection does, in order.
    enum Outbound: Sendable {
        /// Frames one turn of the session produced, written together.
        case frames([TransportFrame])
        case close(CloseCode, reason: String)
    }
}

extension Session: ControlRuntimeHost {
    nonisolated static let noun = "session"
    nonisolated static func input(_ input: RuntimeInput<TimerKey>) -> Input { .runtime(input) }
    nonisolated static func timer(_ timer: ControlTimer) -> TimerKey { TimerKey(timer) }
    nonisolated static func diagnosticName(of timer: TimerKey) -> SessionTimer { timer.sessionTimer }
}

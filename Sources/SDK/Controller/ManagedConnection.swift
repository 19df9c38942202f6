public import ConnectionPolicy

/// The client an app already has (supabase-swift, socket.io-client-swift, Apollo, a
/// `URLSessionWebSocketTask`, a vendor SDK), as a ``ConnectionController`` drives it: asked to
/// open and to close, it reports on the ``ConnectionAttempt`` it was handed when it is open and
/// when it was lost.
///
/// The controller calls these one at a time per attempt and never opens a second attempt before
/// the previous one's ``close(_:)`` returned, so a client that honours the contract below never
/// holds two connections.
public protocol ManagedConnection: Sendable {
    /// Starts opening a connection for `attempt`. Call ``ConnectionAttempt/opened()`` once it is
    /// open (before returning, or later from the client's own callback) and
    /// ``ConnectionAttempt/lost(_:)`` when it fails or ends. Throwing means the open failed (the
    /// same as reporting it lost with the error). The task is cancelled when the controller gives
    /// up on the attempt (the connect timeout, the policy no longer wanting it).
    func open(_ attempt: ConnectionAttempt) async throws

    /// Closes `attempt`'s connection — open, opening, or already lost — and abandons an open in
    /// flight, so that once this returns the attempt will never open. Called for every attempt,
    /// also one that was lost: a client with reconnection of its own must not reconnect by
    /// itself (the policy decides when to try again).
    func close(_ attempt: ConnectionAttempt) async
}

/// One attempt to connect, handed to ``ManagedConnection/open(_:)``: the client reports on it.
/// A client that remembers attempts after their close keeps their ``id`` (unique per
/// controller), not the object: a released object's address may be reused.
/// Reports about an attempt that is no longer the current one change nothing — a second "lost",
/// a "lost" after the controller let go — except an "opened" after the controller gave up on it,
/// which is closed at once.
public final class ConnectionAttempt: Sendable, CustomStringConvertible {
    /// Numbers the controller's attempts, from 1.
    public let id: UInt64
    /// Hands a report to the controller, with the attempt it is about.
    private let report: @Sendable (ConnectionAttempt, Report) -> Void

    enum Report: Sendable {
        case opened
        case lost(DisconnectReason, RetryDisposition)
        case failed(any Error)
    }

    init(id: UInt64, report: @escaping @Sendable (ConnectionAttempt, Report) -> Void) {
        self.id = id
        self.report = report
    }

    /// The connection is open (and whatever the client needs before it is usable is done).
    public func opened() {
        report(self, .opened)
    }

    /// The connection failed to open or ended, because of `error` (nil: no error, the
    /// connection just ended). The controller's error classifier decides whether it is worth
    /// trying again (by default every error is).
    public func lost(_ error: (any Error)? = nil) {
        if let error {
            report(self, .failed(error))
        } else {
            report(self, .lost(.networkLost, .retry))
        }
    }

    /// The connection failed to open or ended for `reason`, with what the client knows about
    /// trying again (for instance `.credentialsRejected` with `.doNotRetry`).
    public func lost(_ reason: DisconnectReason, disposition: RetryDisposition = .retry) {
        report(self, .lost(reason, disposition))
    }

    public var description: String { "attempt \(id)" }
}

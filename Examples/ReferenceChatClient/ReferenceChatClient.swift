public import Foundation
import NIOTransport
public import SDK

/// The kind of client an app already has: a hand-written WebSocket client of the reference
/// server's protocol (`docs/PROTOCOL.md`) on the swift-nio transport. It connects,
/// authenticates, joins its rooms again after every connect, delivers messages and pings — and
/// knows nothing of lifecycles, backoff, watchdogs or background time. Conforming to
/// ``ManagedConnection`` is all it takes for a ``ConnectionController`` to bring those.
public actor ReferenceChatClient: ManagedConnection {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private let url: URL
    private let token: String
    private let transport = NIOWebSocketTransport(connectTimeout: .seconds(5))
    private let codec = JSONWireCodec()
    /// The connection of the attempt being served, the id of its `authenticate`, and the
    /// rejoins not acknowledged yet (the attempt counts as open once they all are).
    private var current: (attempt: ConnectionAttempt, connection: any TransportConnection, authID: RequestID, rejoining: Set<RequestID>)?
    /// Attempts the controller closed, by number (never by object identity: a released
    /// attempt's address is reused): an open that finishes after that closes at once.
    private var closedAttempts: Set<UInt64> = []
    private var rooms: Set<String> = []
    private var nextID: RequestID = 1
    private var pending: [RequestID: CheckedContinuation<Void, any Error>] = [:]
    private let sink: AsyncStream<ChannelMessage>.Continuation
    /// Every message of a room the client joined, as it arrives.
    public nonisolated let messages: AsyncStream<ChannelMessage>
    /// Sockets open now, and the most ever open at once (the controller promises one).
    public private(set) var openSockets = 0
    public private(set) var mostOpenSockets = 0

    public init(url: URL, token: String) {
        self.url = url
        self.token = token
        (messages, sink) = AsyncStream<ChannelMessage>.makeStream()
    }

    // MARK: ManagedConnection

    /// Opens the socket and sends `authenticate`; the attempt is reported open when the server
    /// acknowledges it (from the read loop), or lost.
    public func open(_ attempt: ConnectionAttempt) async throws {
        let connection = try await transport.open(url: url, headers: [:])
        guard !closedAttempts.contains(attempt.id), !Task.isCancelled else {
            await connection.close(code: .normal, reason: "cancelled")
            return
        }
        let authID = makeID()
        current = (attempt, connection, authID, [])
        openSockets += 1
        mostOpenSockets = max(mostOpenSockets, openSockets)
        Task { await self.read(connection, for: attempt) }
        try await connection.send(codec.encode(.authenticate(id: authID, token: Secret(token))))
    }

    public func close(_ attempt: ConnectionAttempt) async {
        closedAttempts.insert(attempt.id)
        guard let current, current.attempt === attempt else { return }
        let connection = current.connection
        release(Failure(description: "closed"))
        await connection.close(code: .normal, reason: "closed by the app")
    }

    // MARK: What the app uses

    /// Joins `room` after every connect, and now when connected (returning once the server
    /// acknowledged it).
    public func join(_ room: String) async throws {
        rooms.insert(room)
        if current != nil { try await request(.subscribe(id: makeID(), channel: room, since: nil)) }
    }

    /// Pings the server and returns when its pong arrives.
    public func ping() async throws {
        try await request(.ping(id: makeID()))
    }

    /// Sends `message` and returns when the server answers it.
    private func request(_ message: ClientMessage) async throws {
        guard let current else { throw Failure(description: "not connected") }
        let frame = try codec.encode(message)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            pending[message.id] = continuation
            Task {
                do {
                    try await current.connection.send(frame)
                } catch {
                    self.finish(message.id, with: error)
                }
            }
        }
    }

    // MARK: The read loop

    private func read(_ connection: any TransportConnection, for attempt: ConnectionAttempt) async {
        for await event in connection.events {
            guard current?.attempt === attempt else { return }
            switch event {
            case .frame(let frame):
                do {
                    try await received(codec.decode(frame), on: attempt)
                } catch {
                    await lose(attempt, .error("bad frame: \(error)"), .retry)
                    return
                }
            case .closed(let code, let reason):
                let detail = (code.map { "code \($0)" } ?? "no close frame") + (reason.isEmpty ? "" : ": \(reason)")
                await lose(attempt, code == nil ? DisconnectReason(.networkLost, detail: detail) : .serverClosed(detail), code == CloseCode(4001) ? .doNotRetry : .retry)
                return
            }
        }
    }

    private func received(_ message: ServerMessage, on attempt: ConnectionAttempt) async throws {
        guard let current, current.attempt === attempt else { return }
        switch message {
        case .ack(let ack) where ack.id == current.authID:
            // Usable once every room is joined again.
            let joins = rooms.sorted().map { ClientMessage.subscribe(id: makeID(), channel: $0, since: nil) }
            self.current?.rejoining = Set(joins.map(\.id))
            if joins.isEmpty { attempt.opened() }
            for join in joins { try await current.connection.send(codec.encode(join)) }
        case .ack(let ack) where current.rejoining.contains(ack.id):
            self.current?.rejoining.remove(ack.id)
            if self.current?.rejoining.isEmpty == true { attempt.opened() }
        case .ack(let ack):
            finish(ack.id, with: nil)
        case .pong(let id):
            finish(id, with: nil)
        case .message(let message):
            sink.yield(message)
        case .error(let error) where error.id == current.authID:
            await lose(attempt, .credentialsRejected, .doNotRetry)
        case .error(let error):
            if let id = error.id { finish(id, with: Failure(description: "\(error)")) }
        case .resumeSet:
            // Version 3 only; this client speaks version 1.
            break
        }
    }

    private func lose(_ attempt: ConnectionAttempt, _ reason: DisconnectReason, _ disposition: RetryDisposition) async {
        guard let current, current.attempt === attempt else { return }
        let connection = current.connection
        release(Failure(description: "connection lost: \(reason)"))
        await connection.close(code: .normal, reason: "lost")
        attempt.lost(reason, disposition: disposition)
    }

    private func release(_ error: any Error) {
        current = nil
        openSockets -= 1
        let waiting = pending
        pending = [:]
        for continuation in waiting.values { continuation.resume(throwing: error) }
    }

    private func finish(_ id: RequestID, with error: (any Error)?) {
        guard let continuation = pending.removeValue(forKey: id) else { return }
        if let error { continuation.resume(throwing: error) } else { continuation.resume() }
    }

    private func makeID() -> RequestID {
        defer { nextID += 1 }
        return nextID
    }
}

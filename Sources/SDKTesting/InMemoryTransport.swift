public import Foundation
public import SDK

/// A transport whose connections reach a ``TestServer`` in memory. Like the world, it refuses
/// what a correct session never does: a second socket while one is open throws
/// ``TransportError/Code/alreadyConnected`` and is counted in ``doubleSocketAttempts``.
public final class InMemoryTransport: Transport {
    private struct State {
        var open = 0
        var opened = 0
        var doubleSocketAttempts = 0
        var urls: [URL] = []
        var headers: [[String: String]] = []
    }

    let server: TestServer
    private let state = Locked(State())

    init(server: TestServer) {
        self.server = server
    }

    /// Sockets open now.
    public var openConnectionCount: Int { state.withLock { $0.open } }
    /// Sockets opened (accepted by the server) in all.
    public var openedConnectionCount: Int { state.withLock { $0.opened } }
    /// Times a second socket was asked for while one was open (a correct session: 0).
    public var doubleSocketAttempts: Int { state.withLock { $0.doubleSocketAttempts } }
    /// The upgrade headers of every open, in order (credentials must never be among them).
    public var requestedHeaders: [[String: String]] { state.withLock { $0.headers } }
    /// The URL of every open, in order.
    public var requestedURLs: [URL] { state.withLock { $0.urls } }

    public func open(url: URL, headers: [String: String]) async throws -> any TransportConnection {
        try Task.checkCancellation()
        let refusedAsDouble: Bool = state.withLock { state in
            state.urls.append(url)
            state.headers.append(headers)
            if state.open > 0 {
                state.doubleSocketAttempts += 1
                return true
            }
            state.open += 1
            state.opened += 1
            return false
        }
        if refusedAsDouble { throw TransportError(.alreadyConnected, "a socket is already open on this transport") }
        let (events, continuation) = AsyncStream<TransportEvent>.makeStream()
        do {
            let id = try server.accept(continuation)
            return InMemoryConnection(id: id, events: events, continuation: continuation, transport: self)
        } catch {
            state.withLock { state in
                state.open -= 1
                state.opened -= 1
            }
            throw error
        }
    }

    func released() {
        state.withLock { $0.open -= 1 }
    }
}

final class InMemoryConnection: TransportConnection {
    let id: ServerCore.ConnectionID
    let events: AsyncStream<TransportEvent>
    private let continuation: AsyncStream<TransportEvent>.Continuation
    private let transport: InMemoryTransport
    private let isClosed = Locked(false)

    init(id: ServerCore.ConnectionID, events: AsyncStream<TransportEvent>, continuation: AsyncStream<TransportEvent>.Continuation, transport: InMemoryTransport) {
        self.id = id
        self.events = events
        self.continuation = continuation
        self.transport = transport
    }

    func send(_ frame: TransportFrame) async throws {
        guard !isClosed.withLock({ $0 }) else { throw TransportError(.notConnected, "the connection is closed") }
        transport.server.received(frame, from: id)
    }

    func close(code: CloseCode, reason: String) async {
        let first = isClosed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        guard first else { return }
        transport.server.clientClosed(id)
        continuation.finish()
        transport.released()
    }
}

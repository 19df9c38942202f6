public import Foundation
public import SDK

/// A transport whose connections reach a ``TestServer`` in memory. Like the world, it refuses
/// what a correct session never does: a second socket while one is open throws
/// `TransportError.Code.alreadyConnected` and is counted in ``doubleSocketAttempts``.
public final class InMemoryTransport: Transport, ActivityCountingTransport {
    private struct State {
        var open = 0
        var opened = 0
        var doubleSocketAttempts = 0
        var urls: [URL] = []
        var headers: [[String: String]] = []
        var openWaiters = CountWaiters(.exactly)
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
    /// The upgrade headers of every open, in order. Since protocol version 2 every open carries
    /// the credentials as `Authorization: Bearer …` (a version-1 server ignores it and reads
    /// them from the first message): read them with care in a test's output, or read
    /// ``TestServer/requests``, whose credentials never show in a description.
    public var requestedHeaders: [[String: String]] { state.withLock { $0.headers } }
    /// The URL of every open, in order.
    public var requestedURLs: [URL] { state.withLock { $0.urls } }

    /// Returns once exactly `count` sockets of this transport are open (at once if they are):
    /// the transport counts a socket from its open until the session closed it, which can be a
    /// moment after the server saw it go (``TestServer/waitForOpenConnections(_:patience:file:line:)``).
    /// Throws ``WaitTimeout`` after `patience` of real time without it.
    public func waitForOpenConnections(
        _ count: Int, patience: Duration = .seconds(10), file: StaticString = #fileID, line: UInt = #line
    ) async throws {
        let signal = state.withLock { $0.openWaiters.register(target: count, count: $0.open) }
        try await waitWithPatience(
            signal, patience: patience, expected: "exactly \(count) open socket(s)", found: { "\(state.withLock { $0.open }) open" },
            file: file, line: line)
    }

    public func open(url: URL, headers: [String: String]) async throws -> any TransportConnection {
        try await open(url: url, headers: headers, subprotocols: [], activity: nil)
    }

    /// Opens offering `subprotocols`: the test server chooses `tether.v3` (or `tether.v2`) when it
    /// speaks version 2 (``TestServer/setAcceptsVersion2(_:)``), none otherwise.
    public func open(url: URL, headers: [String: String], subprotocols: [String]) async throws -> any TransportConnection {
        try await open(url: url, headers: headers, subprotocols: subprotocols, activity: nil)
    }

    /// Opens with every event counted as a unit of the session's work (``TestClock/settle()``).
    package func open(url: URL, headers: [String: String], subprotocols: [String], activity: any ActivityTracking) async throws -> any TransportConnection {
        try await open(url: url, headers: headers, subprotocols: subprotocols, activity: Optional(activity))
    }

    private func open(url: URL, headers: [String: String], subprotocols: [String], activity: (any ActivityTracking)?) async throws -> any TransportConnection {
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
        let ledger = activity.map(EventLedger.init)
        do {
            let (id, subprotocol) = try server.accept(continuation, ledger: ledger, subprotocols: subprotocols, headers: headers)
            notifyOpenWaiters()
            return InMemoryConnection(id: id, subprotocol: subprotocol, events: events, continuation: continuation, transport: self, ledger: ledger)
        } catch {
            state.withLock { state in
                state.open -= 1
                state.opened -= 1
            }
            notifyOpenWaiters()
            throw error
        }
    }

    func released() {
        state.withLock { $0.open -= 1 }
        notifyOpenWaiters()
    }

    private func notifyOpenWaiters() {
        let ready = state.withLock { $0.openWaiters.ready(count: $0.open) }
        for signal in ready { signal.fire() }
    }
}

final class InMemoryConnection: TransportConnection, ActivityCountedConnection {
    let id: ServerCore.ConnectionID
    let subprotocol: String?
    let ledger: EventLedger?
    let events: AsyncStream<TransportEvent>
    private let continuation: AsyncStream<TransportEvent>.Continuation
    private let transport: InMemoryTransport
    private let isClosed = Locked(false)

    init(
        id: ServerCore.ConnectionID, subprotocol: String?, events: AsyncStream<TransportEvent>,
        continuation: AsyncStream<TransportEvent>.Continuation, transport: InMemoryTransport, ledger: EventLedger?
    ) {
        self.id = id
        self.subprotocol = subprotocol
        self.ledger = ledger
        self.events = events
        self.continuation = continuation
        self.transport = transport
    }

    var countedActivity: (any ActivityTracking)? { ledger?.activity }

    func eventRead() { ledger?.read() }

    func readingEnded() { ledger?.ended() }

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
        // Closed by its own client, nothing it still holds is work: a connection closed before
        // anyone read it (an attempt given up on while it opened) would otherwise hold its
        // clock's activity for ever, and `TestClock.settle()` with it.
        ledger?.ended()
        transport.released()
    }
}

public import Foundation
public import SDK

/// Wraps any transport (a real one too) and counts its sockets, so a test, a soak or a chaos
/// run can check "never two sockets; every socket opened is closed".
public final class CountingTransport: Transport {
    private struct State {
        var open = 0
        var maxOpen = 0
        var opened = 0
        var waiters = CountWaiters(.exactly)
    }

    private let base: any Transport
    private let state = Locked(State())

    /// Counts the sockets `base` opens.
    public init(_ base: any Transport) { self.base = base }

    /// Sockets open now.
    public var openCount: Int { state.withLock { $0.open } }
    /// The most sockets open at once.
    public var maxOpen: Int { state.withLock { $0.maxOpen } }
    /// Sockets opened in all.
    public var openedCount: Int { state.withLock { $0.opened } }

    public func open(url: URL, headers: [String: String]) async throws -> any TransportConnection {
        counted(try await base.open(url: url, headers: headers))
    }

    public func open(url: URL, headers: [String: String], subprotocols: [String]) async throws -> any TransportConnection {
        counted(try await base.open(url: url, headers: headers, subprotocols: subprotocols))
    }

    private func counted(_ connection: any TransportConnection) -> any TransportConnection {
        state.withLock { state in
            state.open += 1
            state.opened += 1
            state.maxOpen = max(state.maxOpen, state.open)
        }
        return CountedConnection(connection, transport: self)
    }

    func closed() {
        let ready = state.withLock { state in
            state.open -= 1
            return state.waiters.ready(count: state.open)
        }
        for signal in ready { signal.fire() }
    }

    /// Waits until exactly `count` sockets are open, at most `timeout` of real time (for real
    /// sockets; with a `TestServer`, prefer its own waits); false on timeout.
    public func waitForOpen(_ count: Int, timeout: Duration) async -> Bool {
        guard let signal = state.withLock({ $0.waiters.register(target: count, count: $0.open) }) else { return true }
        return await signal.wait(upTo: timeout) || openCount == count
    }
}

final class CountedConnection: TransportConnection {
    private let base: any TransportConnection
    private let transport: CountingTransport
    private let isClosed = Locked(false)

    init(_ base: any TransportConnection, transport: CountingTransport) {
        self.base = base
        self.transport = transport
    }

    var events: AsyncStream<TransportEvent> { base.events }

    var subprotocol: String? { base.subprotocol }

    func send(_ frame: TransportFrame) async throws { try await base.send(frame) }

    func close(code: CloseCode, reason: String) async {
        await base.close(code: code, reason: reason)
        let first = isClosed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        if first { transport.closed() }
    }
}

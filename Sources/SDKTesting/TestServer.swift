public import SDK
import Foundation

/// An in-memory realtime server that speaks Tether's protocol (`docs/PROTOCOL.md`), for host apps' tests.
/// Connect sessions to it with ``transport()``. It answers at once, in order — or after a
/// delay on a ``TestClock`` — and its faults are switches a test flips, the reference server's
/// set: refuse connections (``setRefusingConnections(_:)``), reject credentials
/// (``setRejectingCredentials(_:)``), freeze (``setFrozen(_:)``), delay answers
/// (``setAnswerDelay(_:on:)``), close every connection with a code
/// (``dropAllConnections(code:reason:)``), restart and lose its history (``restart()``). What
/// the app sent it is in ``requests``.
public final class TestServer: Sendable {
    /// A frame a client sent: the message it decodes to, or why it decodes to none.
    package enum Received: Hashable, Sendable {
        case message(ClientMessage)
        /// A frame the server could not decode (too deep, too large, not the protocol); it
        /// answered as the protocol says (an error, or closing the connection).
        case undecodable(TransportFrame, reason: String)
    }

    /// The frames and bytes each side sent, counted since the server was made (a socket's
    /// opening handshake is not counted; its close is, as closes).
    package struct Traffic: Hashable, Sendable {
        package var clientFrames = 0
        package var clientBytes = 0
        package var serverFrames = 0
        package var serverBytes = 0
        /// Sockets closed, by either side: each close is a close frame on the wire.
        package var closes = 0
    }

    struct State {
        var core: ServerCore
        var traffic = Traffic()
        var connections: [ServerCore.ConnectionID: Peer] = [:]
        var nextID: ServerCore.ConnectionID = 0
        var received: [ClientMessage] = []
        /// What the app sent, each with its connection's number (1 for the first accepted).
        var requests: [(connection: ServerCore.ConnectionID, request: ReceivedRequest)] = []
        var frames: [Received] = []
        var acceptedTotal = 0
        var answerDelay: (delay: Duration, clock: TestClock)?
        /// Answers waiting for their delay, in the order they were made, each with the task
        /// that sleeps until it is due.
        var delayed: [(serial: UInt64, due: TestClock.Instant, outputs: [ServerCore.Output])] = []
        var delayTasks: [UInt64: Task<Void, Never>] = [:]
        var nextDelaySerial: UInt64 = 0
        var isRefusing = false
        var isFrozen = false
        var losesNextPublishAck = false
        var connectionWaiters = CountWaiters(.exactly)
        var messageWaiters = CountWaiters(.atLeast)
        var requestWaiters = CountWaiters(.atLeast)
    }

    let state: Locked<State>
    /// Held from working out a frame's (or a publish's) answers until they are on their
    /// connections: a publish on another thread cannot slip a live message between a
    /// subscribe's `ok` and its catch-up, as a server that writes each connection in order
    /// never does. Recursive: an answer handed to a connection never re-enters on this thread
    /// today, and must not deadlock if it does.
    let order = NSRecursiveLock()

    /// One connection's way to its session: each event yielded is a unit of the session's work
    /// when the session opened it with its tracker (``TestClock/runUntilIdle(limit:)``).
    struct Peer: Sendable {
        let continuation: AsyncStream<TransportEvent>.Continuation
        let ledger: EventLedger?

        func send(_ event: TransportEvent) {
            guard let ledger else {
                continuation.yield(event)
                return
            }
            ledger.send {
                if case .enqueued = continuation.yield(event) { true } else { false }
            }
        }

        func finish() { continuation.finish() }
    }

    /// - Parameters:
    ///   - tokens: accepted tokens; `nil` accepts any.
    ///   - retention: messages kept per channel for catch-up.
    ///   - speaksVersion2: whether it answers a client that offers version 2 (resume in the
    ///     upgrade request) in version 2, or in version 3 (the resume set) when offered. Default false: a version-1 server, so every request —
    ///     `auth` and the resubscribes included — is a frame the server reads; the session then
    ///     authenticates with `auth` and pipelines its replay behind it.
    ///   - maxFrameBytes: the largest frame it reads (default 1 MiB, as the client's). Smaller
    ///     than the client's, it tests what a stricter server does: a larger frame is an
    ///     ``ReceivedRequest/undecodable(reason:)`` request, answered with an error that names no
    ///     request (it reads no further), so the request waits for its timeout.
    ///   - maxDepth: how deeply JSON may nest in a frame it reads (default 32, as the client's).
    ///     Deeper is an ``ReceivedRequest/undecodable(reason:)`` request, and the error answers
    ///     the request by its id: a publish is refused at once.
    public convenience init(
        tokens: Set<String>? = nil, retention: Int = 1000, speaksVersion2: Bool = false, maxFrameBytes: Int = 1 << 20, maxDepth: Int = 32
    ) {
        self.init(
            tokens: tokens, retention: retention, codec: JSONWireCodec(maxFrameBytes: maxFrameBytes, maxDepth: maxDepth), speaksVersion2: speaksVersion2)
    }

    /// `codec`: the server's codec and its limits.
    package init(tokens: Set<String>?, retention: Int, codec: JSONWireCodec, speaksVersion2: Bool) {
        var core = ServerCore(.init(tokens: tokens, retention: retention, codec: codec))
        core.acceptsVersion2 = speaksVersion2
        state = Locked(State(core: core))
    }

    /// A transport whose connections reach this server. It refuses a second concurrent socket.
    public func transport() -> InMemoryTransport {
        InMemoryTransport(server: self)
    }

    // MARK: What a test sees

    /// Every message clients sent, in order (tokens stay redacted in descriptions). Frames that
    /// decode to no message are not here: ``receivedFrames`` has every frame.
    package var receivedMessages: [ClientMessage] { state.withLock { $0.received } }

    /// Every frame clients sent, in order: decoded, or marked undecodable with the reason.
    package var receivedFrames: [Received] { state.withLock { $0.frames } }

    /// What apps sent this server, in the order it read them, across every connection: the
    /// credentials each connection presented, subscribes (those an upgrade request carried
    /// too), unsubscribes, publishes, pings, and frames it could not read. It is written as the
    /// session sends, so after ``TestClock/settle()`` (or ``TestClock/advance(by:)``) it holds
    /// everything the session sent: a test on the clock reads it without waiting.
    ///
    /// ```swift
    /// let server = TestServer(), clock = TestClock(), lifecycle = LifecycleDriver()
    /// let session = Session(settings: try .testing(), transport: server.transport(), clock: clock, lifecycle: lifecycle)
    /// try await withRunningSession(session) { _ in
    ///     let room = try await session.subscribe(to: "room")
    ///     await clock.settle()
    ///     await lifecycle.background()
    ///     await lifecycle.foreground()
    ///     await clock.settle()
    ///     // The second connection subscribed again, once.
    ///     #expect(server.requests(onConnection: 2).filter(\.isSubscribe).map(\.channel) == [room.channel])
    /// }
    /// ```
    public var requests: [ReceivedRequest] { state.withLock { $0.requests.map(\.request) } }

    /// What an app sent on the `number`th connection this server accepted (1 for the first;
    /// ``acceptedConnectionCount`` is the last), in order: after a reconnect, the second
    /// connection's requests show the resubscribes and what followed them.
    public func requests(onConnection number: Int) -> [ReceivedRequest] {
        state.withLock { $0.requests.filter { $0.connection == ServerCore.ConnectionID(number) }.map(\.request) }
    }

    /// The frames and bytes each side sent so far.
    package var traffic: Traffic { state.withLock { $0.traffic } }

    /// Connections open now.
    public var openConnectionCount: Int { state.withLock { $0.connections.count } }

    /// Connections accepted since the server started.
    public var acceptedConnectionCount: Int { state.withLock { $0.acceptedTotal } }

    /// The latest sequence number of `channel`.
    public func latestSequence(of channel: String) -> UInt64 { state.withLock { $0.core.latestSequence(of: channel) } }

    /// The number of connections subscribed to `channel`.
    public func subscriberCount(of channel: String) -> Int { state.withLock { $0.core.subscriberCount(of: channel) } }

    /// Returns once exactly `count` connections are open (at once if they are already); throws
    /// ``WaitTimeout`` after `patience` of real time without it.
    public func waitForOpenConnections(
        _ count: Int, patience: Duration = .seconds(10), file: StaticString = #fileID, line: UInt = #line
    ) async throws {
        let signal = state.withLock { $0.connectionWaiters.register(target: count, count: $0.connections.count) }
        try await waitWithPatience(
            signal, patience: patience, expected: "exactly \(count) open connection(s)",
            found: { "\(openConnectionCount) open" }, file: file, line: line)
    }

    /// Returns once clients have sent at least `count` requests in all (``requests``); throws
    /// ``WaitTimeout`` after `patience` of real time without them. A session on a
    /// ``TestClock`` needs no wait: after `settle()` everything it sent is in ``requests``.
    public func waitForRequests(
        _ count: Int, patience: Duration = .seconds(10), file: StaticString = #fileID, line: UInt = #line
    ) async throws {
        let signal = state.withLock { $0.requestWaiters.register(target: count, count: $0.requests.count) }
        try await waitWithPatience(
            signal, patience: patience, expected: "\(count) request(s) received",
            found: { "\(requests.count): \(requests)" }, file: file, line: line)
    }

    /// Replaced by ``waitForRequests(_:patience:file:line:)``, which counts what ``requests``
    /// shows.
    @available(*, unavailable, renamed: "waitForRequests(_:patience:file:line:)")
    public func waitForReceivedMessages(
        _ count: Int, patience: Duration = .seconds(10), file: StaticString = #fileID, line: UInt = #line
    ) async throws {
        try await waitForRequests(count, patience: patience, file: file, line: line)
    }

    /// Returns once clients have sent at least `count` messages of the reference protocol.
    package func waitForMessages(
        _ count: Int, patience: Duration = .seconds(10), file: StaticString = #fileID, line: UInt = #line
    ) async throws {
        let signal = state.withLock { $0.messageWaiters.register(target: count, count: $0.received.count) }
        try await waitWithPatience(
            signal, patience: patience, expected: "\(count) message(s) received",
            found: { "\(receivedMessages.count): \(receivedMessages)" }, file: file, line: line)
    }

    // MARK: What a test does

    /// Publishes on `channel` from the server side; returns the sequence number. Data the
    /// protocol cannot carry (too large, too deep, NaN) is refused before it gets a number.
    @discardableResult
    public func publish(_ data: JSONValue, to channel: String) throws(CodecError) -> UInt64 {
        order.lock()
        defer { order.unlock() }
        let result: Result<(UInt64, [ServerCore.Output]), CodecError> = state.withLock { state in
            do throws(CodecError) {
                return .success(try state.core.publish(data, to: channel))
            } catch {
                return .failure(error)
            }
        }
        let (sequence, outputs) = try result.get()
        perform(outputs)
        return sequence
    }

    /// Refuses new connections while set.
    public func setRefusingConnections(_ refusing: Bool) { state.withLock { $0.isRefusing = refusing } }

    /// Rejects every credential while set (close code 4001; a version-2 upgrade: HTTP 401).
    public func setRejectingCredentials(_ rejecting: Bool) { state.withLock { $0.core.rejectsAllCredentials = rejecting } }

    /// Whether the server speaks version 2 (resume in the upgrade request) to a client that
    /// offers it, from the next connection on (as `speaksVersion2:` in
    /// ``init(tokens:retention:speaksVersion2:maxFrameBytes:maxDepth:)``).
    public func setAcceptsVersion2(_ accepts: Bool) { state.withLock { $0.core.acceptsVersion2 = accepts } }

    /// Whether a server that speaks version 2 speaks version 3 too (the resume set kept under a
    /// token) to a client that offers it; true unless set.
    package func setAcceptsVersion3(_ accepts: Bool) { state.withLock { $0.core.acceptsVersion3 = accepts } }

    /// Refuses subscriptions to `channels` (error `forbidden`) while set.
    public func setRejectingSubscriptions(to channels: Set<String>) { state.withLock { $0.core.rejectedChannels = channels } }

    /// The next publish is applied (numbered, delivered, remembered by its key) and then its
    /// connection drops before the acknowledgement leaves: the case exactly-once publishing is
    /// for.
    public func loseNextPublishAcknowledgement() { state.withLock { $0.losesNextPublishAck = true } }

    /// While set, frames are accepted and never answered (a half-open connection).
    public func setFrozen(_ frozen: Bool) { state.withLock { $0.isFrozen = frozen } }

    /// While set, every answer to a client's frame leaves `delay` later on `clock` (a slow
    /// network or a busy server), in order; `nil` answers at once again.
    /// ``TestClock/advance(through:)`` and ``TestClock/runUntilIdle(limit:)`` deliver them.
    public func setAnswerDelay(_ delay: Duration?, on clock: TestClock) {
        state.withLock { $0.answerDelay = delay.map { ($0, clock) } }
    }

    /// The server restarts: every connection ends without a close frame (its process went
    /// away) and it forgets its history — every channel starts again at sequence 0, retained
    /// messages and publish keys are gone. The rule a session follows then (a server whose
    /// latest is below what it saw lost its history: start over from its numbering) can be
    /// tested with it.
    public func restart() {
        state.withLock { $0.core.forgetHistory() }
        dropAllConnections(code: nil, reason: "the server restarted")
    }

    /// Sends a raw frame to every open connection (for instance, garbage a hostile server sends).
    public func sendToAll(_ frame: TransportFrame) {
        let peers = state.withLock { Array($0.connections.values) }
        for peer in peers { peer.send(.frame(frame)) }
    }

    /// Closes every connection with `code` (without a close frame when `code` is `nil`).
    public func dropAllConnections(code: CloseCode? = .goingAway, reason: String = "dropped by test") {
        let dropped = state.withLock { state in
            defer { state.connections = [:] }
            for id in state.connections.keys {
                state.core.connectionClosed(id)
                Self.dropDelayedAnswers(to: id, in: &state)
            }
            return Array(state.connections.values)
        }
        for peer in dropped {
            peer.send(.closed(code: code, reason: reason))
            peer.finish()
        }
        notifyConnectionWaiters()
    }
}

import ConnectionPolicy
import Foundation
@testable import SDK
import SDKTesting
import Testing

/// A connection that hands over a read's frames as one batch (`EventBatchingConnection`, as the
/// NIO transport does): the session handles each batch's events in order, and a close inside a
/// batch ends the connection — what follows it in the batch is not delivered.
@Suite("Session: events in batches", .timeLimit(.minutes(1)))
struct SessionEventBatchTests {
    let codec = JSONWireCodec()

    final class BatchTransport: Transport {
        /// What the session sent, in order.
        let sent: AsyncStream<TransportFrame>
        private let sentSink: AsyncStream<TransportFrame>.Continuation
        /// Each connection opened.
        let opened: AsyncStream<BatchConnection>
        private let openedSink: AsyncStream<BatchConnection>.Continuation
        /// The subprotocol the "server" chooses.
        let chosen: String?

        init(subprotocol: String? = nil) {
            (sent, sentSink) = AsyncStream<TransportFrame>.makeStream()
            (opened, openedSink) = AsyncStream<BatchConnection>.makeStream()
            chosen = subprotocol
        }

        func open(url: URL, headers: [String: String]) async throws -> any TransportConnection {
            try await open(url: url, headers: headers, subprotocols: [])
        }

        func open(url: URL, headers: [String: String], subprotocols: [String]) async throws -> any TransportConnection {
            let connection = BatchConnection(sent: sentSink, subprotocol: chosen)
            openedSink.yield(connection)
            return connection
        }
    }

    final class BatchConnection: EventBatchingConnection {
        let reads: BatchOutlet
        /// The frame bytes the session said it took (handled), in all.
        let takenBytes: Locked<Int>
        let subprotocol: String?
        private let sent: AsyncStream<TransportFrame>.Continuation

        init(sent: AsyncStream<TransportFrame>.Continuation, subprotocol: String?) {
            let taken = Locked(0)
            takenBytes = taken
            reads = BatchOutlet(onTaken: { bytes in taken.withLock { $0 += bytes } })
            self.sent = sent
            self.subprotocol = subprotocol
        }

        var events: AsyncStream<TransportEvent> { AsyncStream { $0.finish() } }

        func push(_ batch: [TransportEvent]) { reads.yield(batch) }

        func send(_ frame: TransportFrame) async throws { sent.yield(frame) }

        func close(code: CloseCode, reason: String) async { reads.finish() }
    }

    func frame(_ message: ServerMessage) -> TransportEvent { .frame(try! codec.encode(message)) }

    func message(_ sequence: UInt64, _ data: JSONValue, on channel: String = "room") -> TransportEvent {
        frame(.message(ChannelMessage(channel: channel, sequence: sequence, data: data)))
    }

    /// The next Tether request the session sent.
    func nextRequest(_ sent: inout AsyncStream<TransportFrame>.Iterator) async throws -> ClientMessage? {
        guard let frame = await sent.next() else { return nil }
        return try codec.decodeClientMessage(frame)
    }

    /// A session over a batching connection, its `auth` answered: the test goes on from there
    /// with the connection and what the session sends after `auth`.
    func withConnectedSession(
        _ serverProtocol: ServerProtocol = .tether(handshake: .afterAuthentication), clock: TestClock = TestClock(),
        configure: (AppSettings.Builder) -> AppSettings.Builder = { $0 },
        _ body: (Session, BatchConnection, inout AsyncStream<TransportFrame>.Iterator, StatusRecorder) async throws -> Void
    ) async throws {
        let transport = BatchTransport()
        let settings = try AppSettings.testing(auto: false) { configure($0.serverProtocol(serverProtocol)) }
        let session = Session(settings: settings, transport: transport, clock: clock, lifecycle: LifecycleDriver())
        try await withRunningSession(session) { status in
            var opened = transport.opened.makeAsyncIterator()
            var sent = transport.sent.makeAsyncIterator()
            let connecting = Task { try await session.connect() }
            let connection = try #require(await opened.next())
            #expect(try await nextRequest(&sent) == .authenticate(id: 1, token: Secret("test-token")))
            connection.push([frame(.ack(Ack(id: 1)))])
            try await connecting.value
            try await body(session, connection, &sent, status)
        }
    }

    /// Subscribes to `channel`, the server acknowledging request `id` with its latest `sequence`.
    func subscribe(
        _ session: Session, to channel: String, id: RequestID, latest sequence: UInt64,
        on connection: BatchConnection, _ sent: inout AsyncStream<TransportFrame>.Iterator
    ) async throws -> Subscription {
        let subscribing = Task { try await session.subscribe(to: channel) }
        #expect(try await nextRequest(&sent) == .subscribe(id: id, channel: channel, since: nil))
        connection.push([frame(.ack(Ack(id: id, sequence: sequence)))])
        return try await subscribing.value
    }

    @Test("a batch is handled in order; a close inside it ends the connection and drops what follows")
    func batches() async throws {
        try await withConnectedSession(.tether(handshake: .pipelined)) { session, connection, sent, status in
            let subscribing = Task { try await session.subscribe(to: "room") }
            #expect(try await nextRequest(&sent) == .subscribe(id: 2, channel: "room", since: nil))
            connection.push([
                frame(.ack(Ack(id: 2, sequence: 0))),
                message(1, "a"),
                message(2, "b"),
                .closed(code: .unauthorized, reason: "credentials rejected"),
                message(3, "after the close"),
            ])
            let room = try await subscribing.value
            var messages = room.makeAsyncIterator()
            #expect(try await messages.next()?.data == "a")
            #expect(try await messages.next()?.data == "b")
            try await status.waitFor { $0.reason?.code == .credentialsRejected }
            #expect(session.subscribedChannels["room"] == .some(2), "the message after the close was not delivered")
        }
    }

    @Test("a frame the protocol cannot read inside a batch ends the connection: what came before it is delivered, what follows is not")
    func badFrameInsideABatch() async throws {
        try await withConnectedSession { session, connection, sent, status in
            let room = try await subscribe(session, to: "room", id: 2, latest: 0, on: connection, &sent)
            connection.push([message(1, "a"), message(2, "b"), .frame(.text("garbage")), message(3, "after the bad frame")])
            var batches = room.batches.makeAsyncIterator()
            #expect(try await batches.next()?.messages.map(\.data) == ["a", "b"])
            let passed = try await status.waitFor { $0.reason?.code == .error }
            #expect(passed.last?.reason?.detail?.hasPrefix("bad frame from server") == true, "\(passed)")
            #expect(session.subscribedChannels["room"] == .some(2), "the message after the bad frame was not delivered")
        }
    }

    @Test("what a batch holds after its connection is let go mid-batch (a refresh done) is not carried out")
    func batchAfterTheConnectionIsLetGo() async throws {
        let transport = BatchTransport()
        let log = Locked<[String]>([])
        let settings = try AppSettings.testing(auto: false) {
            $0.serverProtocol(.tether(handshake: .afterAuthentication)).logging { record in log.withLock { $0.append(record.message) } }
        }
        let session = Session(settings: settings, transport: transport, clock: TestClock(), lifecycle: LifecycleDriver())
        try await withRunningSession(session) { _ in
            var opened = transport.opened.makeAsyncIterator()
            var sent = transport.sent.makeAsyncIterator()
            let room = try await session.subscribe(to: "room")  // not connected: made on the next connection
            let refreshing = Task { try await session.refresh(within: .seconds(20)) }
            let connection = try #require(await opened.next())
            #expect(try await nextRequest(&sent) == .authenticate(id: 1, token: Secret("test-token")))
            connection.push([frame(.ack(Ack(id: 1)))])
            #expect(try await nextRequest(&sent) == .subscribe(id: 2, channel: "room", since: nil))
            // The subscription's `ok` completes the refresh, which lets the connection go; the
            // bad frame read with it belongs to a connection that is gone, and ends nothing.
            connection.push([frame(.ack(Ack(id: 2, sequence: 0))), .frame(.text("garbage"))])
            let report = try await refreshing.value
            #expect(report.trigger == .backgroundRefresh)
            await session.turnDone()
            let ended = log.withLock { $0 }.filter { $0.hasPrefix("connection ended") }
            #expect(ended.isEmpty, "\(ended)")
            _ = room
        }
    }

    @Test("the messages of one read reach each subscriber in one step, duplicates dropped, the mirror already at the last one")
    func deliveriesInOneStep() async throws {
        try await withConnectedSession { session, connection, sent, _ in
            let room = try await subscribe(session, to: "room", id: 2, latest: 0, on: connection, &sent)
            let again = try await session.subscribe(to: "room")  // a second subscriber of the channel
            let lobby = try await subscribe(session, to: "lobby", id: 3, latest: 10, on: connection, &sent)

            connection.push([message(1, "a"), message(11, "x", on: "lobby"), message(2, "b"), message(2, "b again"), message(3, "c")])
            var roomBatches = room.batches.makeAsyncIterator()
            var againBatches = again.batches.makeAsyncIterator()
            var lobbyBatches = lobby.batches.makeAsyncIterator()
            let first = try #require(try await roomBatches.next())
            #expect(first.messages.map(\.data) == ["a", "b", "c"], "one step, the duplicate dropped")
            #expect(session.subscribedChannels["room"] == .some(3), "mirrored before the app sees the messages")
            #expect(try await againBatches.next()?.messages.map(\.data) == ["a", "b", "c"])
            #expect(try await lobbyBatches.next()?.messages.map(\.data) == ["x"])

            connection.push([message(4, "d")])
            connection.push([message(5, "e"), message(6, "f")])
            #expect(try await roomBatches.next()?.messages.map(\.data) == ["d"], "a read is a step of its own")
            #expect(try await roomBatches.next()?.messages.map(\.data) == ["e", "f"])
            _ = (again, lobby)
        }
    }

    @Test("messages read together with their subscription's end reach the app before the end does")
    func deliveriesBeforeTheEnd() async throws {
        let transport = BatchTransport(subprotocol: "graphql-transport-ws")
        let settings = try AppSettings.testing(auto: false) { $0.serverProtocol(.graphQLTransportWS()) }
        let session = Session(settings: settings, transport: transport, clock: TestClock(), lifecycle: LifecycleDriver())
        try await withRunningSession(session) { _ in
            var opened = transport.opened.makeAsyncIterator()
            var sent = transport.sent.makeAsyncIterator()
            let connecting = Task { try await session.connect() }
            let connection = try #require(await opened.next())
            #expect(await sent.next() == .text(#"{"payload":{"token":"test-token"},"type":"connection_init"}"#))
            connection.push([.frame(.text(#"{"type":"connection_ack"}"#))])
            try await connecting.value
            let subscription = try await session.subscribe(to: .graphQL("feed", query: "subscription { feed }"))
            #expect(await sent.next() == .text(#"{"id":"s1","payload":{"query":"subscription { feed }"},"type":"subscribe"}"#))
            connection.push([
                .frame(.text(#"{"id":"s1","type":"next","payload":{"data":{"feed":1}}}"#)),
                .frame(.text(#"{"id":"s1","type":"next","payload":{"data":{"feed":2}}}"#)),
                .frame(.text(#"{"id":"s1","type":"error","payload":[{"message":"feed closed"}]}"#)),
            ])
            var messages = subscription.makeAsyncIterator()
            #expect(try await messages.next()?.data == ["data": ["feed": 1]])
            #expect(try await messages.next()?.data == ["data": ["feed": 2]])
            await #expect(throws: SessionError.self) { _ = try await messages.next() }
            #expect(session.subscribedChannels["feed"] == nil)
        }
    }

    @Test("an iterator dropped halfway through a batch leaves the rest of it to the next iterator")
    func iteratorsShareTheBatch() async throws {
        try await withConnectedSession { session, connection, sent, _ in
            let room = try await subscribe(session, to: "room", id: 2, latest: 0, on: connection, &sent)
            connection.push([message(1, "a"), message(2, "b"), message(3, "c")])
            for try await message in room {
                #expect(message.data == "a")
                break
            }
            // A later read waits behind the rest: the next iterator reads the rest first.
            connection.push([message(4, "d")])
            var next = room.makeAsyncIterator()
            try #require(try await next.next()?.data == "b")
            #expect(try await next.next()?.data == "c")
            #expect(try await next.next()?.data == "d")
            connection.push([message(5, "e")])
            var another = room.makeAsyncIterator()
            #expect(try await another.next()?.data == "e")
        }
    }
}

extension Session {
    /// Returns once the turn the session is in (if any) has ended: an isolated call waits for it.
    func turnDone() {}
}

import ConnectionPolicy
import Foundation
import SDK
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
        let sent: AsyncStream<ClientMessage>
        private let sentSink: AsyncStream<ClientMessage>.Continuation
        /// Each connection opened.
        let opened: AsyncStream<BatchConnection>
        private let openedSink: AsyncStream<BatchConnection>.Continuation

        init() {
            (sent, sentSink) = AsyncStream<ClientMessage>.makeStream()
            (opened, openedSink) = AsyncStream<BatchConnection>.makeStream()
        }

        func open(url: URL, headers: [String: String]) async throws -> any TransportConnection {
            let connection = BatchConnection(sent: sentSink)
            openedSink.yield(connection)
            return connection
        }
    }

    final class BatchConnection: EventBatchingConnection {
        let eventBatches: AsyncStream<[TransportEvent]>
        private let continuation: AsyncStream<[TransportEvent]>.Continuation
        private let sent: AsyncStream<ClientMessage>.Continuation

        init(sent: AsyncStream<ClientMessage>.Continuation) {
            (eventBatches, continuation) = AsyncStream<[TransportEvent]>.makeStream()
            self.sent = sent
        }

        var events: AsyncStream<TransportEvent> { AsyncStream { $0.finish() } }

        func push(_ batch: [TransportEvent]) { continuation.yield(batch) }

        func send(_ frame: TransportFrame) async throws {
            sent.yield(try JSONWireCodec().decodeClientMessage(frame))
        }

        func close(code: CloseCode, reason: String) async { continuation.finish() }
    }

    func frame(_ message: ServerMessage) -> TransportEvent { .frame(try! codec.encode(message)) }

    @Test("a batch is handled in order; a close inside it ends the connection and drops what follows")
    func batches() async throws {
        let transport = BatchTransport()
        let settings = try AppSettings.testing(auto: false) { $0.serverProtocol(.tether(handshake: .pipelined)) }
        let session = Session(settings: settings, transport: transport, clock: TestClock(), lifecycle: LifecycleDriver())
        try await withRunningSession(session) { status in
            var opened = transport.opened.makeAsyncIterator()
            var sent = transport.sent.makeAsyncIterator()
            let connecting = Task { try await session.connect() }
            let connection = try #require(await opened.next())
            #expect(await sent.next() == .authenticate(id: 1, token: Secret("test-token")))
            connection.push([frame(.ack(Ack(id: 1)))])
            try await connecting.value
            let subscribing = Task { try await session.subscribe(to: "room") }
            #expect(await sent.next() == .subscribe(id: 2, channel: "room", since: nil))
            connection.push([
                frame(.ack(Ack(id: 2, sequence: 0))),
                frame(.message(ChannelMessage(channel: "room", sequence: 1, data: "a"))),
                frame(.message(ChannelMessage(channel: "room", sequence: 2, data: "b"))),
                .closed(code: .unauthorized, reason: "credentials rejected"),
                frame(.message(ChannelMessage(channel: "room", sequence: 3, data: "after the close"))),
            ])
            let room = try await subscribing.value
            var messages = room.makeAsyncIterator()
            #expect(try await messages.next()?.data == "a")
            #expect(try await messages.next()?.data == "b")
            try await status.waitFor { $0.reason?.code == .credentialsRejected }
            #expect(session.subscribedChannels["room"] == .some(2), "the message after the close was not delivered")
        }
    }
}

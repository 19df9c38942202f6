import Foundation
import SDK
import SDKTesting
import Testing

@Suite("TestServer and InMemoryTransport")
struct TestServerTests {
    let codec = JSONWireCodec()

    @Test("speaks the protocol: auth first, subscribe with catch-up, publish with fan-out")
    func protocolExchange() async throws {
        let server = TestServer(tokens: ["t"], retention: 2)
        let connection = try await server.transport().open(url: .init(string: "ws://127.0.0.1/")!, headers: [:])
        var events = connection.events.makeAsyncIterator()
        func next() async throws -> ServerMessage {
            guard case .frame(let frame)? = await events.next() else { throw CodecError(.malformed, "no frame") }
            return try codec.decode(frame)
        }
        for n in 1...3 { try server.publish(JSONValue(n), to: "c") }
        try await connection.send(codec.encode(ClientMessage.authenticate(id: 1, token: Secret("t"))))
        #expect(try await next() == .ack(Ack(id: 1)))
        try await connection.send(codec.encode(ClientMessage.subscribe(id: 2, channel: "c", since: 0)))
        // Retention 2 kept only 2 and 3: a gap after 0.
        #expect(try await next() == .ack(Ack(id: 2, sequence: 3, gap: true)))
        #expect(try await next() == .message(ChannelMessage(channel: "c", sequence: 2, data: 2)))
        #expect(try await next() == .message(ChannelMessage(channel: "c", sequence: 3, data: 3)))
        try await connection.send(codec.encode(ClientMessage.publish(id: 3, channel: "c", data: "x")))
        #expect(try await next() == .ack(Ack(id: 3, sequence: 4)))
        #expect(try await next() == .message(ChannelMessage(channel: "c", sequence: 4, data: "x")))
        try await connection.send(codec.encode(ClientMessage.ping(id: 4)))
        #expect(try await next() == .pong(id: 4))
        await connection.close(code: .normal, reason: "")
        #expect(server.openConnectionCount == 0)
    }

    @Test("traffic counts the frames and bytes each side sent, and each close (what `bench power`'s radio model reads)")
    func traffic() async throws {
        let server = TestServer(tokens: ["t"])
        let connection = try await server.transport().open(url: .init(string: "ws://127.0.0.1/")!, headers: [:])
        var events = connection.events.makeAsyncIterator()
        let auth = try codec.encode(ClientMessage.authenticate(id: 1, token: Secret("t")))
        let ping = try codec.encode(ClientMessage.ping(id: 2))
        try await connection.send(auth)
        _ = await events.next()
        try await connection.send(ping)
        guard case .frame(let pong)? = await events.next() else {
            Issue.record("no pong")
            return
        }
        let counted = server.traffic
        #expect(counted.clientFrames == 2 && counted.serverFrames == 2)
        #expect(counted.clientBytes == auth.byteCount + ping.byteCount)
        #expect(counted.serverBytes > pong.byteCount, "the auth's ok and the pong")
        #expect(counted.closes == 0)
        await connection.close(code: .normal, reason: "")
        #expect(server.traffic.closes == 1)
        #expect(server.traffic.clientFrames == 2, "a close is counted as a close, not a frame")
    }

    @Test("a wrong token is answered with unauthorized and close code 4001")
    func rejectsToken() async throws {
        let server = TestServer(tokens: ["right"])
        let connection = try await server.transport().open(url: .init(string: "ws://127.0.0.1/")!, headers: [:])
        try await connection.send(codec.encode(ClientMessage.authenticate(id: 1, token: Secret("wrong"))))
        var events = connection.events.makeAsyncIterator()
        guard case .frame(let frame)? = await events.next(), case .error(let error) = try codec.decode(frame) else {
            Issue.record("expected an error reply")
            return
        }
        #expect(error.code == ServerError.unauthorizedCode)
        #expect(await events.next() == .closed(code: .unauthorized, reason: "credentials rejected"))
    }

    @Test("the transport refuses a second concurrent socket, and counts it")
    func refusesSecondSocket() async throws {
        let transport = TestServer().transport()
        let first = try await transport.open(url: .init(string: "ws://127.0.0.1/")!, headers: [:])
        await #expect(throws: TransportError.self) { _ = try await transport.open(url: .init(string: "ws://127.0.0.1/")!, headers: [:]) }
        #expect(transport.doubleSocketAttempts == 1)
        await first.close(code: .normal, reason: "")
        _ = try await transport.open(url: .init(string: "ws://127.0.0.1/")!, headers: [:])
        #expect(transport.openedConnectionCount == 2)
    }

    @Test("receivedFrames keeps a frame the server cannot decode, marked with why; receivedMessages leaves it out")
    func undecodableFrames() async throws {
        let server = TestServer()
        let connection = try await server.transport().open(url: .init(string: "ws://127.0.0.1/")!, headers: [:])
        try await connection.send(codec.encode(ClientMessage.authenticate(id: 1, token: Secret("t"))))
        try await connection.send(.text("not json"))
        #expect(server.receivedMessages.count == 1)
        #expect(server.receivedFrames.count == 2)
        guard case .undecodable(.text("not json"), let reason)? = server.receivedFrames.last else {
            Issue.record("the undecodable frame is missing: \(server.receivedFrames)")
            return
        }
        #expect(!reason.isEmpty)
        #expect(server.receivedFrames.first == .message(.authenticate(id: 1, token: Secret("t"))))
    }

    @Test("restart: connections end without a close frame and the history is gone; the session starts over from the server's numbering")
    func restart() async throws {
        let server = TestServer(), clock = TestClock()
        let session = Session(settings: try .testing(), transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            var messages = try await session.subscribe(to: "c").makeAsyncIterator()
            for n in 1...3 { try server.publish(JSONValue(n), to: "c") }
            for _ in 1...3 { _ = try await messages.next() }
            let mark = status.mark()
            server.restart()
            #expect(server.latestSequence(of: "c") == 0)
            try await status.waitFor(after: mark) { if case .reconnecting(let reason) = $0 { reason.code == .networkLost } else { false } }
            await clock.advance(by: .seconds(30))
            #expect(session.status == .connected)
            #expect(try server.publish("after", to: "c") == 1)
            #expect(try await messages.next() == ChannelMessage(channel: "c", sequence: 1, data: "after"), "not dropped as a duplicate of the old 1")
        }
    }

    @Test("an answer delay holds every answer until the clock passes it; advance(by:) delivers them in order")
    func answerDelay() async throws {
        let server = TestServer(), clock = TestClock()
        server.setAnswerDelay(.seconds(2), on: clock)
        let session = Session(settings: try .testing(), transport: server.transport(), clock: clock)
        try await withRunningSession(session) { _ in
            await clock.settle()
            #expect(server.receivedMessages.count == 1, "auth sent")
            #expect(session.status == .connecting, "its answer waits for the clock")
            await clock.advance(by: .seconds(2))
            #expect(session.status == .connected)
            server.setAnswerDelay(nil, on: clock)
            _ = try await session.subscribe(to: "c")
            #expect(server.subscriberCount(of: "c") == 1)
        }
    }

    @Test("a closed connection's delayed answers are dropped: nothing is left asleep on the clock for it; another's still come")
    func delayedAnswersOfAClosedConnection() async throws {
        let server = TestServer(tokens: ["t"]), clock = TestClock()
        server.setAnswerDelay(.seconds(2), on: clock)
        let url = URL(string: "ws://127.0.0.1/")!
        let leaving = try await server.transport().open(url: url, headers: [:])
        let staying = try await server.transport().open(url: url, headers: [:])
        try await leaving.send(codec.encode(ClientMessage.authenticate(id: 1, token: Secret("t"))))
        try await staying.send(codec.encode(ClientMessage.authenticate(id: 1, token: Secret("t"))))
        await clock.settle()
        #expect(clock.sleeperCount == 2, "each answer waits for the clock")
        await leaving.close(code: .normal, reason: "")
        await clock.settle()
        #expect(clock.sleeperCount == 1, "the closed connection's answer no longer waits")
        await clock.advance(by: .seconds(2))
        var events = staying.events.makeAsyncIterator()
        guard case .frame(let frame)? = await events.next() else { throw CodecError(.malformed, "no answer") }
        #expect(try codec.decode(frame) == .ack(Ack(id: 1)))
        #expect(clock.sleeperCount == 0)
        await staying.close(code: .normal, reason: "")
        server.setAnswerDelay(nil, on: clock)
    }

    @Test("InMemoryTransport waits for its open count, which the session's close brings down")
    func transportWaits() async throws {
        let server = TestServer(), lifecycle = LifecycleDriver()
        let transport = server.transport()
        let session = Session(settings: try .testing(), transport: transport, clock: TestClock(), lifecycle: lifecycle)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            try await transport.waitForOpenConnections(1)
            await lifecycle.background()
            try await transport.waitForOpenConnections(0)
            #expect(transport.openConnectionCount == 0 && server.openConnectionCount == 0)
        }
    }
}

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
}

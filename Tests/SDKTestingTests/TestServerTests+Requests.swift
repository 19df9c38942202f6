import Foundation
import SDK
import SDKTesting
import Testing

/// `TestServer.requests`, as a host app's test reads it: only public API here.
@Suite("TestServer: what the app sent")
struct TestServerRequestsTests {
    @Test("a session's credentials, subscribe, publish and ping are there, in order, once the clock settles: no wait")
    func settlesWithTheClock() async throws {
        let server = TestServer(), clock = TestClock()
        let session = Session(settings: try .testing(auto: false, token: "alice"), transport: server.transport(), clock: clock)
        try await withRunningSession(session) { _ in
            try await session.connect()
            let room = try await session.subscribe(to: "room")
            let receipt = try await session.publish(["text": "hi"], to: "room")
            try await session.ping()
            await clock.settle()
            #expect(receipt.confirmation == .acknowledged)
            let requests = server.requests
            #expect(requests.count == 4)
            #expect(requests.first == .credentials(Secret("alice")))
            #expect(requests.dropFirst().first == .subscribe(channel: room.channel, from: nil))
            guard case .publish(let channel, let data, let key)? = requests.dropFirst(2).first else {
                Issue.record("no publish in \(requests)")
                return
            }
            #expect(channel == "room" && data == ["text": "hi"] && key != nil)
            #expect(requests.last == .ping)
            #expect(server.requests(onConnection: 1) == requests)
            #expect(server.requests(onConnection: 2).isEmpty)
        }
    }

    @Test("a publish whose acknowledgement was lost reaches the server again after the resubscribe, with the same key: one publish")
    func publishAfterResubscribe() async throws {
        let server = TestServer(), clock = TestClock()
        let session = Session(settings: try .testing(), transport: server.transport(), clock: clock)
        try await withRunningSession(session) { status in
            let room = try await session.subscribe(to: "room")
            try server.publish("before", to: "room")
            await clock.settle()
            server.loseNextPublishAcknowledgement()
            let call = Task { try await session.publish("once", to: "room") }
            try await status.waitFor(.reconnecting(DisconnectReason.serverClosed("code 1001: dropped before the acknowledgement")))
            await clock.advance(by: .seconds(5))   // the reconnect's backoff
            _ = try await call.value
            #expect(server.acceptedConnectionCount == 2)
            let first = server.requests(onConnection: 1).filter(\.isPublish)
            let second = server.requests(onConnection: 2)
            #expect(first.count == 1)
            #expect(second.count == 3, "\(second)")
            #expect(second.first == .credentials(Secret("test-token")))
            guard second.count == 3, case .subscribe(let channel, let position) = second[1] else {
                Issue.record("no resubscribe in \(second)")
                return
            }
            #expect(channel == room.channel && position?.sequence == 1, "from the message it had")
            #expect(second.last == first.first, "the same publish, the same key, after the resubscribe")
            #expect(server.latestSequence(of: "room") == 2, "applied once")
        }
    }

    @Test("a version-2 upgrade: the credentials and the subscriptions it carried are requests of that connection")
    func upgradeCarriesRequests() async throws {
        let server = TestServer(speaksVersion2: true), clock = TestClock(), lifecycle = LifecycleDriver()
        let session = Session(settings: try .testing(token: "bob"), transport: server.transport(), clock: clock, lifecycle: lifecycle)
        try await withRunningSession(session) { _ in
            let room = try await session.subscribe(to: "room")
            await clock.settle()
            await lifecycle.background()
            await lifecycle.foreground()
            await clock.settle()
            #expect(server.acceptedConnectionCount == 2)
            let second = server.requests(onConnection: 2)
            #expect(second.first == .credentials(Secret("bob")))
            guard second.count == 2, case .subscribe(let channel, let position) = second[1] else {
                Issue.record("not the upgrade's subscribe: \(second)")
                return
            }
            #expect(channel == room.channel && position?.sequence == 0, "from where the first connection stopped: nothing yet")
        }
    }

    @Test("a server stricter than the client: a frame nested deeper than it reads is an undecodable request, and the publish is refused, not lost")
    func stricterServer() async throws {
        let server = TestServer(maxDepth: 4), clock = TestClock()
        let session = Session(settings: try .testing(auto: false), transport: server.transport(), clock: clock)
        try await withRunningSession(session) { _ in
            try await session.connect()
            let deep: JSONValue = ["a": ["b": ["c": ["d": ["e": "too deep for this server"]]]]]
            await #expect(throws: SessionError.self) { try await session.publish(deep, to: "room") }
            guard case .undecodable(let reason)? = server.requests.last else {
                Issue.record("no undecodable request in \(server.requests)")
                return
            }
            #expect(reason.contains("deep"), "\(reason)")
            #expect(server.latestSequence(of: "room") == 0)
        }
    }

    @Test("credentials never show in a description, and waitForRequests counts what requests shows")
    func redactedAndCounted() async throws {
        let server = TestServer()
        let session = Session(settings: try .testing(auto: false, token: "s3cret"), transport: server.transport())
        try await withRunningSession(session) { _ in
            try await session.connect()
            try await server.waitForRequests(1)
            #expect(server.requests == [.credentials(Secret("s3cret"))])
            #expect(!"\(server.requests)".contains("s3cret"))
            await #expect(throws: WaitTimeout.self) { try await server.waitForRequests(2, patience: .milliseconds(50)) }
        }
    }
}

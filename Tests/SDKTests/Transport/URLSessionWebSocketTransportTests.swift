import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import SDK
import SDKTesting
import Testing

@Suite("URLSessionWebSocketTransport")
struct URLSessionWebSocketTransportTests {
    /// The same implementation runs here as on Apple platforms; what this Foundation's libcurl
    /// can do is found out at run time. This machine's has no WebSocket support: the open is
    /// refused as `unavailable`. (With a libcurl that has it, nothing listens on port 9: the
    /// open fails as `connectionFailed`. Either way a typed error, never a hang or a crash.)
    @Test("opening where this Foundation cannot speak WebSocket fails at run time with a clear typed error")
    func unavailableAtRunTime() async {
        let error = await #expect(throws: TransportError.self) {
            _ = try await URLSessionWebSocketTransport().open(url: URL(string: "ws://127.0.0.1:9/")!, headers: [:], subprotocols: ["tether.v2"])
        }
        #if canImport(Darwin)
        #expect(error?.code == .connectionFailed)
        #else
        if error?.code == .unavailable {
            #expect(error?.message.contains("libcurl") == true)
        } else {
            #expect(error?.code == .connectionFailed, "\(String(describing: error))")
        }
        #endif
    }

    @Test("only a task that failed for its URL's scheme counts as 'this Foundation cannot'")
    func unsupportedSchemeClassified() {
        #expect(URLSessionWebSocketTransport.isUnsupportedScheme(NSError(domain: NSURLErrorDomain, code: NSURLErrorUnsupportedURL)))
        #expect(!URLSessionWebSocketTransport.isUnsupportedScheme(NSError(domain: NSURLErrorDomain, code: NSURLErrorCannotConnectToHost)))
        #expect(!URLSessionWebSocketTransport.isUnsupportedScheme(NSError(domain: "other", code: NSURLErrorUnsupportedURL)))
        #expect(!URLSessionWebSocketTransport.isUnsupportedScheme(TransportError(.connectionFailed, "x")))
    }

    @Test("a session on it reports the failure as a typed reason, and keeps working")
    func sessionReportsIt() async throws {
        let settings = try AppSettings.Builder().serverURL("ws://127.0.0.1:9/").autoEstablishSocketConnection(false)
            .reconnectBackoff(Backoff(initial: .milliseconds(1), maxAttempts: 1)).build()
        let session = Session(settings: settings, transport: URLSessionWebSocketTransport())
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await session.run() }
            await #expect(throws: SessionError.self) { try await session.connect() }
            #expect(session.status.reason?.code == .retriesExhausted)
            await session.shutdown()
        }
    }

    @Test("the app's configuration reaches each socket's session, as a copy: a change to it after the transport was made changes nothing")
    func configurationReachesTheSession() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 7
        configuration.httpAdditionalHeaders = ["X-App": "tether-test"]
        let transport = URLSessionWebSocketTransport(configuration: configuration)
        configuration.timeoutIntervalForRequest = 99
        let session = transport.makeSession(delegate: nil)
        #expect(session.configuration.timeoutIntervalForRequest == 7)
        #expect(session.configuration.httpAdditionalHeaders?["X-App"] as? String == "tether-test")
        #expect(transport.configuration.timeoutIntervalForRequest == 7)
        session.invalidateAndCancel()
    }

    #if !canImport(Security)
    @Test("the trust evaluation is asked with the server's host and port; a refusal is remembered and is a serverUntrusted error; without one, every server is left to the system")
    func trustGate() {
        let asked = Locked<[String]>([])
        let gate = ServerTrustGate { challenge in
            asked.withLock { $0.append("\(challenge.host):\(challenge.port)") }
            return challenge.host == "pinned.example.com"
        }
        #expect(gate.evaluate(ServerTrustChallenge(host: "pinned.example.com", port: 443)))
        #expect(gate.refusedHost == nil)
        #expect(!gate.evaluate(ServerTrustChallenge(host: "evil.example.net", port: 8443)))
        #expect(gate.refusedHost == "evil.example.net")
        #expect(asked.withLock { $0 } == ["pinned.example.com:443", "evil.example.net:8443"])
        let error = ServerTrustGate.refusal(of: "evil.example.net")
        #expect(error.code == .serverUntrusted && error.message.contains("evil.example.net"))
        #expect(ServerTrustGate(nil).evaluate(ServerTrustChallenge(host: "any", port: 1)))
    }
    #endif

    @Test("a server the app's trust evaluation refused: disconnected as serverUntrusted, never retried, until connect()")
    func untrustedIsNotRetried() async throws {
        let clock = TestClock()
        let transport = RefusingTransport(error: ServerTrustGate.refusal(of: "evil.example.net"))
        let session = Session(settings: try .testing(), transport: transport, clock: clock)
        try await withRunningSession(session) { status in
            let seen = try await status.waitFor { $0.reason?.code == .serverUntrusted }
            #expect(seen.last == .disconnected(DisconnectReason(.serverUntrusted, detail: "the app's server trust evaluation refused evil.example.net: not retried")))
            await clock.advance(by: .seconds(3600))
            #expect(transport.opens.withLock { $0 } == 1 && session.status.reason?.code == .serverUntrusted, "no second attempt in an hour")
        }
    }
}

@Suite("Transport: subprotocols")
struct TransportSubprotocolTests {
    @Test("a transport that cannot offer subprotocols refuses to open with some, and opens without")
    func defaultRefuses() async throws {
        let transport = PlainTransport(base: TestServer().transport())
        let error = await #expect(throws: TransportError.self) {
            try await transport.open(url: URL(string: "ws://127.0.0.1:9/")!, headers: [:], subprotocols: ["graphql-transport-ws"])
        }
        #expect(error?.code == .unavailable)
        let connection = try await transport.open(url: URL(string: "ws://127.0.0.1:9/")!, headers: [:], subprotocols: [])
        #expect(connection.subprotocol == nil)
        await connection.close(code: .normal, reason: "")
    }
}

/// A transport that implements only `open(url:headers:)`: offering subprotocols falls to the
/// protocol's default.
private struct PlainTransport: Transport {
    let base: InMemoryTransport

    func open(url: URL, headers: [String: String]) async throws -> any TransportConnection {
        try await base.open(url: url, headers: headers)
    }

}

/// A transport whose every open fails with `error`.
private struct RefusingTransport: Transport {
    let error: TransportError
    let opens = Locked(0)

    func open(url: URL, headers: [String: String]) async throws -> any TransportConnection {
        opens.withLock { $0 += 1 }
        throw error
    }
}

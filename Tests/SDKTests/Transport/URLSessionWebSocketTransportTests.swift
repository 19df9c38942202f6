import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SDK
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

import Foundation
import SDK
import SDKTesting
import Testing

@Suite("URLSessionWebSocketTransport")
struct URLSessionWebSocketTransportTests {
    #if !canImport(Darwin)
    @Test("on Linux, opening fails with a clear typed error instead of hanging or crashing")
    func unavailableOnLinux() async {
        do {
            _ = try await URLSessionWebSocketTransport().open(url: URL(string: "ws://127.0.0.1:9/")!, headers: [:])
            Issue.record("opened a WebSocket where Foundation has none")
        } catch let error as TransportError {
            #expect(error.code == .unavailable)
            #expect(error.message.contains("libcurl"))
        } catch {
            Issue.record("untyped error: \(error)")
        }
    }
    #endif

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

import Foundation
import NIOTransport
import PeerServers
import SDK
import SDKTesting
import Testing

extension SupabaseIntegrationTests {
    @Test("a binding on a table the database does not have: the peer repeats the postgres_changes error while the channel is joined, as the real server does; the app is handed it once")
    func changeErrorRepeatedDeliveredOnce() async throws {
        try await PeerServer.withRunning(.supabase, environment: ["CHANGES_RETRY_MS": "200"]) { server in
            let transport = CountingFrames(NIOWebSocketTransport(), containing: "Unable to subscribe to changes")
            let session = Session(settings: try settings(port: server.port), transport: transport)
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                let config = SupabaseChannelConfig(receivesOwnBroadcasts: true, postgresChanges: [PostgresChangeFilter(table: "no_such_table")])
                var room = try await session.subscribe(to: .supabase("badtable", config: config)).makeAsyncIterator()
                let deadline = ContinuousClock.now + .seconds(10)
                while transport.count < 4, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
                #expect(transport.count >= 4, "the server said it again and again: \(transport.count) times")
                _ = try await session.publish(["event": "msg", "payload": ["n": 1]], to: "badtable")
                let events = try await Self.events(&room) { $0 == "n1" }
                #expect(events.filter { $0 == "system" }.count == 1, "the error once, not once per repeat: \(events)")
            }
        }
    }
}

/// A transport that counts the text frames received that contain `needle` (a real socket's
/// events, passed on as they come).
final class CountingFrames: Transport {
    private let base: any Transport
    private let needle: String
    private let counted = Locked(0)

    init(_ base: any Transport, containing needle: String) {
        self.base = base
        self.needle = needle
    }

    var count: Int { counted.withLock { $0 } }

    func open(url: URL, headers: [String: String]) async throws -> any TransportConnection {
        Counted(try await base.open(url: url, headers: headers), needle: needle, counted: counted)
    }

    func open(url: URL, headers: [String: String], subprotocols: [String]) async throws -> any TransportConnection {
        Counted(try await base.open(url: url, headers: headers, subprotocols: subprotocols), needle: needle, counted: counted)
    }

    private final class Counted: TransportConnection {
        let base: any TransportConnection
        let events: AsyncStream<TransportEvent>

        init(_ base: any TransportConnection, needle: String, counted: Locked<Int>) {
            self.base = base
            let (events, continuation) = AsyncStream<TransportEvent>.makeStream()
            self.events = events
            let pump = Task {
                for await event in base.events {
                    if case .frame(.text(let text)) = event, text.contains(needle) { counted.withLock { $0 += 1 } }
                    continuation.yield(event)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in pump.cancel() }
        }

        var subprotocol: String? { base.subprotocol }
        func send(_ frame: TransportFrame) async throws { try await base.send(frame) }
        func close(code: CloseCode, reason: String) async { await base.close(code: code, reason: reason) }
    }
}

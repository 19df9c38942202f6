import Foundation
import NIOTransport
import PeerServers
import SDK
import SDKTesting
import Testing

/// A relaunch after a kill, over real sockets against a real python-socketio server: a room the
/// killed launch held cannot be caught up (Socket.IO has no positions), so the relaunch's report
/// names it for refetch — never a silent loss.
@Suite("A relaunch against a real Socket.IO server", .timeLimit(.minutes(3)), .serialized)
struct RelaunchIntegrationTests {
    @Test("killed holding room-1, messages sent meanwhile: the relaunch subscribes to it again, gets what comes next, and its launch report names room-1 in refetch")
    func heldRoomIsRefetched() async throws {
        let backend = PeerBackend.socketIO
        // A heartbeat a loaded machine answers in time: this test is about the relaunch, and the
        // app's one-second ping timeout (for the heartbeat tests) closed a socket mid-publish under
        // the thread sanitizer with the whole suite running.
        try await PeerServer.withRunning(backend.app, environment: ["PING_INTERVAL_MS": "5000", "PING_TIMEOUT_MS": "20000"]) { server in
            let store = InMemorySessionStore()
            let first = Session(settings: try backend.settings(port: server.port) { $0.store(store) }, transport: NIOWebSocketTransport())
            try await withRunningSession(first, patience: .realServer) { status in
                try await status.waitFor(.connected)
                var messages = try await first.subscribe(to: backend.topic).makeAsyncIterator()
                _ = try #require(try await backend.nextMessage(first, &messages))
                store.kill()
            }
            // Meanwhile another client sends three messages to the room: missed by the app.
            let other = Session(settings: try backend.settings(port: server.port), transport: NIOWebSocketTransport())
            try await withRunningSession(other, patience: .realServer) { status in
                try await status.waitFor(.connected)
                for _ in 1...3 { _ = try await other.publish(backend.publishData, to: backend.topic.name) }
            }
            // Manual: the relaunch subscribes before it connects, as an app that subscribes at launch.
            let second = Session(settings: try backend.settings(port: server.port, auto: false) { $0.store(store.relaunched()) }, transport: NIOWebSocketTransport())
            var reports = second.recoveryReports.makeAsyncIterator()
            try await withRunningSession(second, patience: .realServer) { status in
                var messages = try await second.subscribe(to: backend.topic).makeAsyncIterator()
                try await second.connect()
                try await status.waitFor(.connected)
                let report = try #require(await reports.next())
                #expect(report.trigger == .appConnect, "Manual's first connect: \(report.trigger)")
                #expect(report.refetch == [backend.topic.name] && !report.isComplete, "what the killed launch missed is unknown: \(report)")
                #expect(try await backend.nextMessage(second, &messages)?.channel == backend.topic.name, "subscribed again")
            }
        }
    }
}

import Foundation
import NIOTransport
import PeerServers
@testable import SDK
import SDKTesting
import Testing

/// The MQTT adapter against a real, unmodified mosquitto 2.0 (Debian's package), with its
/// password file and persistence, on free loopback ports; stopped by its process id.
@Suite("MQTT against mosquitto", .timeLimit(.minutes(3)), .serialized)
struct MQTTIntegrationTests {
    static func settings(
        _ broker: MQTTBroker, clientID: String, version: MQTTVersion = .v3_1_1, qos: MQTTQoS = .atLeastOnce, auto: Bool = true,
        token: String = MQTTBroker.password, keepAlive: Duration = .seconds(60), _ configure: (AppSettings.Builder) -> AppSettings.Builder = { $0 }
    ) throws -> AppSettings {
        try configure(
            AppSettings.Builder()
                .serverURL(broker.url)
                .serverProtocol(.mqtt(clientID: clientID, username: MQTTBroker.username, version: version, qos: qos, keepAlive: keepAlive))
                .autoEstablishSocketConnection(auto)
                .token(token)
                .peerTestTimings()
        ).build()
    }

    /// The MQTT packets among `frames`.
    static func packets(_ frames: [TransportFrame], _ version: MQTTVersion = .v3_1_1) -> [MQTTPacket] {
        var decoder = MQTTStreamDecoder(version: version, maximumPacketSize: 1 << 20)
        return frames.flatMap { frame -> [MQTTPacket] in
            guard case .binary(let bytes) = frame else { return [] }
            return (try? decoder.append(bytes)) ?? []
        }
    }

    /// Runs a second session, the publisher, for `body`.
    static func withPublisher(_ broker: MQTTBroker, qos: MQTTQoS = .atLeastOnce, _ body: (Session) async throws -> Void) async throws {
        let publisher = Session(settings: try settings(broker, clientID: "publisher", qos: qos), transport: NIOWebSocketTransport())
        try await withRunningSession(publisher, patience: .realServer) { status in
            try await status.waitFor(.connected)
            try await body(publisher)
        }
    }

    @Test("credentials accepted; rejected ones end as credentialsRejected with no retry loop")
    func credentials() async throws {
        try await MQTTBroker.withRunning { broker in
            let accepted = Session(settings: try Self.settings(broker, clientID: "good"), transport: NIOWebSocketTransport())
            try await withRunningSession(accepted, patience: .realServer) { status in try await status.waitFor(.connected) }
            let transport = CountingTransport(NIOWebSocketTransport())
            let rejected = Session(settings: try Self.settings(broker, clientID: "bad", token: "wrong"), transport: transport)
            try await withRunningSession(rejected, patience: .realServer) { status in
                try await expectRejectedWithoutRetry(status, session: rejected, transport: transport)
            }
        }
    }

    @Test("subscribe with a wildcard, receive; publish QoS 1 (acknowledged) and QoS 0 (sent, not confirmed)", arguments: [MQTTVersion.v3_1_1, .v5])
    func subscribeAndPublish(version: MQTTVersion) async throws {
        try await MQTTBroker.withRunning { broker in
            let session = Session(settings: try Self.settings(broker, clientID: "app", version: version), transport: NIOWebSocketTransport())
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                var messages = try await session.subscribe(to: "sensors/+/temp").makeAsyncIterator()
                let receipt = try await session.publish(["celsius": 21.5], to: "sensors/kitchen/temp")
                #expect(receipt.isAcknowledged, "QoS 1: PUBACK")
                let message = try #require(try await messages.next())
                #expect(message.channel == "sensors/+/temp")
                #expect(message.data == ["topic": "sensors/kitchen/temp", "payload": ["celsius": 21.5]])
                try await Self.withPublisher(broker, qos: .atMostOnce) { publisher in
                    let unconfirmed = try await publisher.publish("plain", to: "sensors/hall/temp")
                    #expect(unconfirmed.confirmation == .sentUnconfirmed)
                    #expect(try await messages.next()?.data["topic"] == "sensors/hall/temp")
                }
            }
        }
    }

    @Test("Auto: background closes at once; QoS 1 messages published meanwhile arrive exactly once after the foreground, with no resubscribe; the report counts them caught up", arguments: [MQTTVersion.v3_1_1, .v5])
    func backgroundCatchUp(version: MQTTVersion) async throws {
        try await MQTTBroker.withRunning { broker in
            let lifecycle = LifecycleDriver()
            let recording = RecordingTransport(NIOWebSocketTransport())
            let transport = CountingTransport(recording)
            let session = Session(settings: try Self.settings(broker, clientID: "phone", version: version), transport: transport, lifecycle: lifecycle)
            var reports = session.recoveryReports.makeAsyncIterator()
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                _ = await reports.next()
                var messages = try await session.subscribe(to: "chat/room-1").makeAsyncIterator()
                await lifecycle.background()
                #expect(session.status == .disconnected(.appBackgrounded))
                #expect(await transport.waitForOpen(0, timeout: .seconds(5)), "closed at once")
                try await Self.withPublisher(broker) { publisher in
                    for index in 1...3 { _ = try await publisher.publish(["n": JSONValue(index)], to: "chat/room-1") }
                }
                let sentBefore = recording.sent.count
                await lifecycle.foreground()
                try await status.waitFor(.connected)
                let report = try #require(await reports.next())
                #expect(report.trigger == .foreground)
                #expect(report.caughtUp == ["chat/room-1": 3], "\(report)")
                #expect(report.refetch.isEmpty && report.isComplete, "\(report)")
                for index in 1...3 { #expect(try await messages.next()?.data["payload"] == ["n": JSONValue(index)]) }
                let afterForeground = Self.packets(Array(recording.sent[sentBefore...]), version)
                #expect(!afterForeground.contains { $0.type == 8 }, "no SUBSCRIBE on resume: \(afterForeground.map(\.type))")
                // Exactly once: the next message is the live one, not a repeat.
                try await Self.withPublisher(broker) { publisher in _ = try await publisher.publish("live", to: "chat/room-1") }
                #expect(try await messages.next()?.data["payload"] == "live")
                #expect(transport.maxOpen == 1)
            }
        }
    }

    @Test("Manual: the background watchdog disconnects after its timeout")
    func manualWatchdog() async throws {
        try await MQTTBroker.withRunning { broker in
            let settings = try Self.settings(broker, clientID: "manual", auto: false) { $0.backgroundTimeout(.milliseconds(800)) }
            try await expectManualWatchdog(settings, transport: NIOWebSocketTransport())
        }
    }

    /// PROTOCOLS.md: "Goodbye: DISCONNECT (0)". Recorded on the wire to a real mosquitto, for
    /// each close of the client's own: the background close (Auto), `disconnect()`, the watchdog
    /// (Manual) and `shutdown()`.
    @Test("every close of the client's own says goodbye first: a DISCONNECT right before the WebSocket close", arguments: [MQTTVersion.v3_1_1, .v5])
    func goodbye(version: MQTTVersion) async throws {
        try await MQTTBroker.withRunning { broker in
            func disconnectBeforeEachClose(_ recording: RecordingTransport) -> Bool {
                let log = recording.log
                var closes = 0
                for (index, entry) in log.enumerated() {
                    guard case .closed = entry else { continue }
                    closes += 1
                    guard index > 0, case .sent(let frame) = log[index - 1], Self.packets([frame], version).last?.type == 14 else { return false }
                }
                return closes > 0
            }
            let lifecycle = LifecycleDriver()
            let auto = RecordingTransport(NIOWebSocketTransport())
            let session = Session(settings: try Self.settings(broker, clientID: "polite-auto", version: version), transport: auto, lifecycle: lifecycle)
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                await lifecycle.background()            // the background close
                try await auto.waitForCloses(1)
                await lifecycle.foreground()
                try await status.waitFor(.connected, after: status.mark())
                await session.disconnect()              // the app's disconnect()
                try await auto.waitForCloses(2)
                try await session.connect()
            }                                           // shutdown()
            try await auto.waitForCloses(3)
            #expect(disconnectBeforeEachClose(auto), "\(auto.log.map { entry in if case .closed(let code) = entry { "close \(code)" } else { "frame" } })")

            let manualLifecycle = LifecycleDriver()
            let manual = RecordingTransport(NIOWebSocketTransport())
            let watched = Session(
                settings: try Self.settings(broker, clientID: "polite-manual", version: version, auto: false) { $0.backgroundTimeout(.milliseconds(300)) },
                transport: manual, lifecycle: manualLifecycle
            )
            try await withRunningSession(watched, patience: .realServer) { status in
                try await watched.connect()
                await manualLifecycle.background()
                try await status.waitFor(.disconnected(.watchdogExpired))   // the watchdog
                try await manual.waitForCloses(1)
            }
            #expect(disconnectBeforeEachClose(manual))
        }
    }

    @Test("the broker killed (SIGKILL) and restarted with its persistence: the session resumes, no resubscribe, messages flow; never two sockets")
    func killedAndRestarted() async throws {
        let first = try await MQTTBroker.start()
        let recording = RecordingTransport(NIOWebSocketTransport())
        let transport = CountingTransport(recording)
        let session = Session(settings: try Self.settings(first, clientID: "survivor"), transport: transport)
        var reports = session.recoveryReports.makeAsyncIterator()
        var restarted: MQTTBroker?
        do {
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                _ = await reports.next()
                var messages = try await session.subscribe(to: "alerts/#").makeAsyncIterator()
                let subscribedAt = Date()  // the broker has acknowledged the subscription
                // mosquitto saves its persistence every second (autosave_interval 1): wait for a
                // save written after the subscription, not for a guess at how long one takes.
                try await Self.waitForSave(of: first, after: subscribedAt)
                first.send(SIGKILL)
                await first.exited()
                try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
                let sentBefore = recording.sent.count
                restarted = try await MQTTBroker.start(restarting: first)
                try await status.waitFor(.connected)
                let report = try #require(await reports.next())
                #expect(report.trigger == .reconnect)
                #expect(report.refetch.isEmpty, "the broker's session survived: \(report)")
                #expect(!Self.packets(Array(recording.sent[sentBefore...])).contains { $0.type == 8 }, "no SUBSCRIBE")
                try await Self.withPublisher(try #require(restarted)) { publisher in _ = try await publisher.publish("after", to: "alerts/fire") }
                #expect(try await messages.next()?.data == ["topic": "alerts/fire", "payload": "after"])
                #expect(transport.maxOpen == 1)
            }
        } catch {
            await first.stop(removingDirectory: restarted == nil)
            await restarted?.stop(removingDirectory: true)
            throw error
        }
        await first.stop()
        await restarted?.stop(removingDirectory: true)
    }

    /// Returns once the broker's persistence file was written after `instant` (a save that holds
    /// what the broker knew then); fails, naming the file, when none comes within 10 s.
    static func waitForSave(of broker: MQTTBroker, after instant: Date) async throws {
        let file = broker.directory.appendingPathComponent("data/mosquitto.db").path
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            // A save finished 200 ms after `instant` began after it (a save of this small
            // database takes a few milliseconds), so it holds what the broker knew then.
            let modified = (try? FileManager.default.attributesOfItem(atPath: file)[.modificationDate]) as? Date
            if let modified, modified > instant.addingTimeInterval(0.2) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("mosquitto wrote no save to \(file) within 10 s")
        throw CancellationError()
    }

    @Test("the broker stopped (SIGSTOP): the keep-alive finds the silent link (no heartbeat of the session's own)")
    func stopped() async throws {
        try await MQTTBroker.withRunning { broker in
            let settings = try Self.settings(broker, clientID: "watcher", keepAlive: .seconds(2)) { $0.noHeartbeat() }
            let session = Session(settings: settings, transport: NIOWebSocketTransport())
            try await withRunningSession(session, patience: .realServer) { status in
                try await status.waitFor(.connected)
                let clock = ContinuousClock()
                broker.send(SIGSTOP)
                let start = clock.now
                try await status.waitFor { if case .reconnecting(let reason) = $0 { reason.code == .networkLost } else { false } }
                let noticed = clock.now - start
                broker.send(SIGCONT)
                // A PINGREQ every 1.5 s, unanswered for 1 s: 2.5 s, plus slack for a loaded machine.
                #expect(noticed <= .seconds(6), "noticed after \(noticed)")
                try await status.waitFor(.connected)
            }
        }
    }
}

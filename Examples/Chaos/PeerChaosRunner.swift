import Foundation
import NIOTransport
import PeerServers
import SDK
import SDKTesting

/// What `chaos --protocol` needs to know about each real server.
struct PeerChaosProtocol: Sendable {
    /// The server, with its environment (a short heartbeat, so a stopped server is found quickly).
    let server: PeerHost.Kind
    let serverProtocol: ServerProtocol
    let path: String
    /// The protocol's own timers, which Manual mode may keep in the background with its socket.
    let wireTimers: Set<String>
    /// The topic for the runner's channel `c0`, `c1`, … (its name is the channel's in the session).
    let topic: @Sendable (String) -> Topic
    let publishData: @Sendable (String, Int) -> JSONValue
    /// Indicates that a channel delivers only what is published on it (Socket.IO rooms), rather
    /// than by itself (the GraphQL fixture's ticks).
    let deliversOnlyPublished: Bool
    /// Indicates that the protocol resumes (MQTT's persistent session), so a report may count
    /// messages caught up; gaps it cannot know either way.
    var resumes = false

    static func named(_ name: String) -> PeerChaosProtocol? {
        switch name {
        case "graphql-ws", "graphql-transport-ws":
            PeerChaosProtocol(
                server: .app(.graphQL, environment: [:]), serverProtocol: .graphQLTransportWS(), path: "/graphql", wireTimers: [],
                topic: { .graphQL($0, query: "subscription($room: String!) { ticks(room: $room) }", variables: ["room": .string($0)]) },
                publishData: { _, n in ["query": .string("mutation { post(text: \"\(n)\") }")] }, deliversOnlyPublished: false
            )
        case "socket.io", "socketio":
            PeerChaosProtocol(
                server: .app(.socketIO, environment: ["PING_INTERVAL_MS": "1000", "PING_TIMEOUT_MS": "1000"]), serverProtocol: .socketIO(), path: "/",
                wireTimers: [SocketIO.heartbeat.name], topic: { Topic($0) },
                publishData: { channel, n in ["text": .string("\(channel)-\(n)")] }, deliversOnlyPublished: true
            )
        case "mqtt":
            // One client id per process run; a short keep-alive so a stopped broker is found.
            PeerChaosProtocol(
                server: .mosquitto, serverProtocol: .mqtt(clientID: "chaos-\(ProcessInfo.processInfo.processIdentifier)", username: MQTTBroker.username, keepAlive: .seconds(2)),
                path: "/", wireTimers: [MQTT.keepAliveTimer.name, MQTT.pingTimer.name], topic: { Topic($0) },
                publishData: { channel, n in ["text": .string("\(channel)-\(n)")] }, deliversOnlyPublished: true, resumes: true
            )
        case "phoenix":
            // The scripted peer with a short idle timeout, and a keep-alive well inside it.
            PeerChaosProtocol(
                server: .app(.phoenix, environment: ["IDLE_TIMEOUT_MS": "3000"]),
                serverProtocol: .phoenix(params: ["user": "chaos"], keepAlive: .seconds(1), replyTimeout: .milliseconds(500)), path: "/socket",
                wireTimers: [PhoenixChannels.keepAliveTimer.name, "phoenix-reply-*"], topic: { .phoenix("room:\($0)") },
                publishData: { _, n in ["event": "new_msg", "payload": ["n": .number(JSONNumber(n))]] }, deliversOnlyPublished: true
            )
        case "supabase", "supabase-realtime":
            // The scripted Supabase peer: public channels that echo their own broadcasts.
            PeerChaosProtocol(
                server: .app(.supabase, environment: ["IDLE_TIMEOUT_MS": "3000"]),
                serverProtocol: .supabaseRealtime(apiKey: "anon", keepAlive: .seconds(1), replyTimeout: .milliseconds(500)), path: "/realtime/v1",
                wireTimers: [PhoenixChannels.keepAliveTimer.name, "phoenix-reply-*"],
                topic: { .supabase($0, config: SupabaseChannelConfig(receivesOwnBroadcasts: true)) },
                publishData: { _, n in ["event": "msg", "payload": ["n": .number(JSONNumber(n))]] }, deliversOnlyPublished: true
            )
        default: nil
        }
    }
}

/// Runs one schedule against a real server and returns the invariants it broke: never two
/// sockets; nothing connected or open while Auto is in the background or after `disconnect()`;
/// no recurring timer of the session's in the background; every host call completes; no report
/// claims a catch-up the protocol cannot make; after the faults clear, every held subscription
/// delivers again; no socket left after shutdown.
struct PeerChaosRunner {
    let host: PeerHost
    let peer: PeerChaosProtocol
    let seed: UInt64
    let auto: Bool
    let settle: Duration

    func run(_ steps: [PeerChaosStep]) async throws -> [String] {
        let transport = CountingTransport(NIOWebSocketTransport(connectTimeout: .seconds(1)))
        let lifecycle = ManualLifecycleSource()
        let settings = try AppSettings.Builder()
            .serverURL("ws://127.0.0.1:\(host.port)\(peer.path)")
            .serverProtocol(peer.serverProtocol)
            .token("s3cret")  // every peer server accepts it (MQTTBroker.password too)
            .autoEstablishSocketConnection(auto)
            .backgroundTimeout(.milliseconds(400))
            .reconnectBackoff(Backoff(initial: .milliseconds(50), multiplier: 2, maximum: .milliseconds(400), jitter: 0.2))
            .jitter(.seeded(seed))
            .connectTimeout(.seconds(1))
            .requestTimeout(.seconds(1))
            .outboxTimeout(.seconds(3))
            .stableConnectionAfter(.milliseconds(100))
            .heartbeat(interval: .milliseconds(300), timeout: .milliseconds(300))
            .foregroundProbeTimeout(.milliseconds(300))
            .logger(ProcessInfo.processInfo.environment["CHAOS_LOG"] == nil ? .silent : SessionLogger(minimumLevel: .debug) { record in
                FileHandle.standardError.write(Data("\(Date().timeIntervalSince1970) \(record)\n".utf8))
            })
            .build()
        let backgroundTime = TestBackgroundTime()
        let session = Session(settings: settings, transport: transport, lifecycle: lifecycle, backgroundTime: backgroundTime)
        let violations = Locked([String]())
        func violated(_ text: String) { violations.withLock { $0.append(text) } }

        var consumers: [Int: (received: Locked<[JSONValue]>, task: Task<Void, Never>)] = [:]
        var app = ChaosApp(session: session, lifecycle: lifecycle, transport: transport, backgroundTime: backgroundTime, auto: auto, backgroundWireTimers: peer.wireTimers)
        let reports = Task {
            for await report in session.recoveryReports where (!report.caughtUp.isEmpty && !peer.resumes) || !report.gaps.isEmpty {
                violated("a report claims a catch-up (or a gap) the protocol cannot know: \(report)")
            }
        }

        await withTaskGroup(of: Void.self) { group in
            group.addTask { await session.run() }

            for (index, step) in steps.enumerated() {
                let at = "after step \(index + 1) (\(step))"
                switch step {
                case .app(let appStep):
                    await app.perform(appStep)
                case .subscribe(let channel):
                    guard consumers[channel] == nil, let subscription = try? await session.subscribe(to: peer.topic("c\(channel)")) else { break }
                    let name = peer.topic("c\(channel)").name
                    let received = Locked([JSONValue]())
                    let task = Task {
                        do {
                            for try await message in subscription {
                                if message.channel != name { violated("\(name) delivered a message of \(message.channel)") }
                                received.withLock { $0.append(message.data) }
                            }
                        } catch {}
                    }
                    consumers[channel] = (received, task)
                case .unsubscribe(let channel):
                    if let consumer = consumers.removeValue(forKey: channel) {
                        await session.unsubscribe(from: peer.topic("c\(channel)").name)
                        consumer.task.cancel()
                    }
                case .publish(let channel):
                    let data = peer.publishData("c\(channel)", index)
                    let name = peer.topic("c\(channel)").name
                    app.started(Task { _ = try? await session.publish(data, to: name) })
                case .kill: await host.kill()
                case .start: try? await host.start()
                case .stop: await host.stop()
                case .resume: await host.resume()
                case .restart: try? await host.restart()
                }
                try? await Task.sleep(for: settle)

                // Invariants after every step.
                for violation in await app.violationsAfterStep(at) { violated(violation) }
            }

            // Back to normal: the server up and answering, the app in the foreground.
            do { try await host.heal() } catch { violated("the server could not be started again: \(error)") }
            if !(await app.reconnects(within: .seconds(8))) { violated("not connected again after the faults cleared (status \(session.status))") }
            for (channel, consumer) in consumers.sorted(by: { $0.key < $1.key }) {
                let before = consumer.received.withLock { $0.count }
                let marker = peer.publishData("c\(channel)", 1_000_000 + channel)
                let name = peer.topic("c\(channel)").name
                let delivered = await succeeds(within: .seconds(8)) {
                    // Where only published messages arrive, publish (again, should the first
                    // land before the resubscribe is done) until one does.
                    while !Task.isCancelled {
                        if peer.deliversOnlyPublished { _ = try? await session.publish(marker, to: name) }
                        if consumer.received.withLock({ $0.count }) > before { return true }
                        try? await Task.sleep(for: .milliseconds(200))
                    }
                    return false
                }
                if !delivered { violated("\(name) delivers nothing after recovery (status \(session.status))") }
            }
            await session.shutdown()
            await group.waitForAll()
        }
        reports.cancel()
        for consumer in consumers.values { consumer.task.cancel() }
        for violation in await app.violationsAtEnd() { violated(violation) }
        return violations.withLock { $0 }
    }
}

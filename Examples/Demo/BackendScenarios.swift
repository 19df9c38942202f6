import Foundation
import NIOTransport
import SDK

/// `swift run demo --protocol graphql-ws|socket.io|mqtt|phoenix --url URL [--token T]`: the
/// narrated, checked session against a server the user runs (the fixture apps and broker in
/// `Examples/PeerServers/Apps/`, or one of theirs with `--subscription`/`--mutation`, `--room`,
/// or `--topic`/`--username`).
struct BackendScenarios {
    struct Backend {
        let serverProtocol: ServerProtocol
        let topic: Topic
        let publishData: JSONValue
        /// Socket.IO rooms and MQTT topics deliver only what is published to them.
        let deliversOnlyPublished: Bool
        /// The server keeps the subscriptions across connections (an MQTT persistent session).
        var resumes = false
    }

    let url: String
    let token: String
    let backend: Backend
    let narrator: Narrator

    /// The backend `--protocol` names, with the fixture apps' schema and events as defaults.
    static func backend(_ name: String, option: (String) -> String?) -> Backend? {
        switch name {
        case "graphql-ws", "graphql-transport-ws":
            let subscription = option("--subscription") ?? #"subscription { ticks(room: "demo") }"#
            let mutation = option("--mutation") ?? #"mutation { post(text: "hello from Tether") }"#
            return Backend(serverProtocol: .graphQLTransportWS(), topic: Topic("demo", options: ["query": .string(subscription)]),
                           publishData: ["query": .string(mutation)], deliversOnlyPublished: false)
        case "socket.io", "socketio":
            let room = option("--room") ?? "demo"
            return Backend(serverProtocol: .socketIO(), topic: Topic(room), publishData: ["text": "hello from Tether"], deliversOnlyPublished: true)
        case "mqtt":
            let topic = option("--topic") ?? "demo/chat"
            return Backend(serverProtocol: .mqtt(username: option("--username") ?? "tether"), topic: Topic(topic),
                           publishData: ["text": "hello from Tether"], deliversOnlyPublished: true, resumes: true)
        case "phoenix":
            let topic = option("--topic") ?? "room:demo"
            return Backend(serverProtocol: .phoenix(params: ["user": "tether-demo"]), topic: .phoenix(topic),
                           publishData: ["event": "new_msg", "payload": ["body": "hello from Tether"]], deliversOnlyPublished: true)
        default:
            return nil
        }
    }

    func settings(auto: Bool) throws -> AppSettings {
        try AppSettings.Builder()
            .serverURL(url)
            .serverProtocol(backend.serverProtocol)
            .token(token)
            .autoEstablishSocketConnection(auto)
            .backgroundTimeout(.seconds(2))
            .reconnectBackoff(Backoff(initial: .milliseconds(200), multiplier: 2, maximum: .seconds(2), jitter: 0.2))
            .stableConnectionAfter(.milliseconds(500))
            .build()
    }

    func withSession(_ settings: AppSettings, lifecycle: ManualLifecycleSource, _ body: (Session, StatusWatcher) async throws -> Void) async throws {
        try await withNarratedSession(settings, lifecycle: lifecycle, narrator: narrator, body)
    }

    /// The next message on the subscription, within 5 s (publishing first where the server
    /// only echoes what is published).
    func nextMessage(_ session: Session, _ messages: inout Subscription.AsyncIterator) async throws -> ChannelMessage? {
        if backend.deliversOnlyPublished { _ = try await session.publish(backend.publishData, to: backend.topic.name) }
        return try await messages.next()
    }

    func auto() async throws {
        narrator.section("Auto mode over \(backend.serverProtocol) at \(url)")
        let lifecycle = ManualLifecycleSource(initialState: .active)
        try await withSession(try settings(auto: true), lifecycle: lifecycle) { session, watcher in
            let connected = await watcher.wait { $0 == .connected }
            narrator.check(connected != nil, "connected at launch: the protocol's handshake carried the token")
            let subscription = try await session.subscribe(to: backend.topic)
            var messages = subscription.makeAsyncIterator()
            narrator.say("subscribed to \(backend.topic.name)")
            let first = try await nextMessage(session, &messages)
            let numbering = first?.sequence.map { "sequence \($0), numbered by the session: the broker has none" } ?? "no sequence number on this protocol"
            narrator.check(first != nil, "a message arrived: \(first.map { "\($0.data)" } ?? "none") (\(numbering))")
            let receipt = try await session.publish(backend.publishData, to: backend.topic.name)
            narrator.check(true, "published: \(receipt)\(receipt.response.map { ", the server answered \($0)" } ?? "")")

            narrator.say("app goes to the background")
            await lifecycle.send(.background)
            narrator.check(session.status == .disconnected(.appBackgrounded), "disconnected at once, reason: app backgrounded", detail: "\(session.status)")

            narrator.say("app returns to the foreground")
            watcher.skipSeen()
            var reports = session.recoveryReports.makeAsyncIterator()
            await lifecycle.send(.active)
            narrator.check(await watcher.wait { $0 == .connected } != nil, "reconnected on return to the foreground")
            if let report = await reports.next() {
                narrator.say("recovery report: \(report)")
                if backend.resumes {
                    narrator.check(report.refetch.isEmpty,
                                   "the broker kept the session: no resubscribe, nothing to refetch (caught up \(report.caughtUp[backend.topic.name] ?? 0))", detail: "\(report)")
                } else {
                    narrator.check(report.refetch.contains(backend.topic.name),
                                   "the report says refetch \(backend.topic.name): this protocol cannot resume, so what was missed is unknown", detail: "\(report)")
                }
            } else {
                narrator.check(false, "a recovery report was published")
            }
            // A second subscriber of the held topic sees only what is delivered from now on.
            var fresh = try await session.subscribe(to: backend.topic).makeAsyncIterator()
            let again = try await nextMessage(session, &fresh)
            narrator.check(again != nil, "resubscribed: messages arrive again")
        }
    }

    func manual() async throws {
        narrator.section("Manual mode over \(backend.serverProtocol): the background watchdog (2 s here)")
        let lifecycle = ManualLifecycleSource(initialState: .active)
        try await withSession(try settings(auto: false), lifecycle: lifecycle) { session, watcher in
            try await session.connect()
            narrator.check(session.status == .connected, "connect() returns once connected")
            await lifecycle.send(.background)
            narrator.say("app goes to the background and does not ping")
            let watchdog = await watcher.wait(timeout: .seconds(5)) { $0 == .disconnected(.watchdogExpired) }
            narrator.check(watchdog != nil, "disconnected by the watchdog")
        }
    }
}

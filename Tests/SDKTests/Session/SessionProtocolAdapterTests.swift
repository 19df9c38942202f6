import ConnectionPolicy
import Foundation
import SDK
import SDKTesting
import Testing

/// The session over the graphql-transport-ws and Socket.IO adapters, the test playing the
/// server frame by frame on the test clock: what the core does where a protocol can do less
/// (no sequence numbers, no resume, no publish ack, no client ping), what a refused upgrade or a
/// wrong subprotocol means, and that credentials put in a URL never reach a log line.
@Suite("Session: protocol adapters", .timeLimit(.minutes(1)))
struct SessionProtocolAdapterTests {
    let clock = TestClock()
    let endpoint = URL(string: "ws://127.0.0.1:9/")!

    func session(_ transport: ScriptedTransport, auto: Bool = true, _ configure: @escaping (AppSettings.Builder) -> AppSettings.Builder) throws -> Session {
        Session(settings: try .testing(auto: auto, configure: configure), transport: transport, clock: clock)
    }

    /// A session over graphql-transport-ws whose server (the test) accepts `connection_init`.
    func withGraphQLSession(_ body: (Session, ScriptedTransport, inout ScriptedLog) async throws -> Void) async throws {
        let transport = ScriptedTransport(subprotocol: "graphql-transport-ws")
        let session = try session(transport) { $0.serverProtocol(.graphQLTransportWS()) }
        var log = ScriptedLog(transport)
        try await withRunningSession(session) { status in
            _ = await log.nextSent()
            transport.push(#"{"type":"connection_ack"}"#)
            try await status.waitFor(.connected)
            try await body(session, transport, &log)
        }
    }

    @Test("graphql-transport-ws: subscribe with the operation, unnumbered messages, a mutation's result as the receipt, and a reconnect that says refetch")
    func graphQL() async throws {
        let transport = ScriptedTransport(subprotocol: "graphql-transport-ws")
        let session = try session(transport) { $0.serverProtocol(.graphQLTransportWS()) }
        let log = ScriptedLog(transport)
        let reports = PatientReader(session.recoveryReports)
        try await withRunningSession(session) { status in
            #expect(await log.next() == .opened(endpoint, subprotocols: ["graphql-transport-ws"]))
            #expect(await log.nextSent() == #"{"payload":{"token":"test-token"},"type":"connection_init"}"#)
            transport.push(#"{"type":"connection_ack"}"#)
            try await status.waitFor(.connected)
            _ = await reports.next()

            let topic = Topic.graphQL("messages", query: "subscription { messages { text } }")
            let subscription = try await session.subscribe(to: topic)
            var messages = subscription.makeAsyncIterator()
            #expect(await log.nextSent() == #"{"id":"s1","payload":{"query":"subscription { messages { text } }"},"type":"subscribe"}"#)
            transport.push(#"{"id":"s1","type":"next","payload":{"data":{"messages":{"text":"hi"}}}}"#)
            #expect(try await messages.next() == ChannelMessage(channel: "messages", sequence: nil, data: ["data": ["messages": ["text": "hi"]]]))

            let mutation: JSONValue = ["query": #"mutation { post(text: "yo") { ok } }"#]
            let publish = Task { try await session.publish(mutation, to: "messages") }
            #expect(await log.nextSent() == #"{"id":"p2","payload":{"query":"mutation { post(text: \"yo\") { ok } }"},"type":"subscribe"}"#)
            transport.push(#"{"id":"p2","type":"next","payload":{"data":{"post":{"ok":true}}}}"#)
            transport.push(#"{"id":"p2","type":"complete"}"#)
            #expect(try await publish.value == PublishReceipt(.acknowledged, response: ["data": ["post": ["ok": true]]]))

            await clock.advance(by: .seconds(60))  // a working connection: its loss is retried at once
            transport.closeFromServer(.goingAway, reason: "redeploy")
            var skipped: [ScriptedTransport.Event] = []
            #expect(await log.nextSent(skipped: &skipped) == #"{"payload":{"token":"test-token"},"type":"connection_init"}"#)
            #expect(skipped == [.closed(.normal), .opened(endpoint, subprotocols: ["graphql-transport-ws"])], "one socket at a time")
            transport.push(#"{"type":"connection_ack"}"#)
            #expect(await log.nextSent() == #"{"id":"s1","payload":{"query":"subscription { messages { text } }"},"type":"subscribe"}"#, "the same operation, on a fresh machine")
            let report = try #require(await reports.next())
            #expect(report.trigger == .reconnect)
            #expect(report.refetch == ["messages"], "graphql-transport-ws cannot resume: what was missed is unknown")
            #expect(report.caughtUp.isEmpty && report.gaps.isEmpty)
            #expect(!report.isComplete)
            #expect(report.channelsToRefetch == ["messages"])
        }
    }

    @Test("graphql-transport-ws has no idempotency key: a mutation in flight when the connection drops fails as connectionLost and is not re-sent; an unsent one waits and goes")
    func noResendWithoutKeys() async throws {
        try await withGraphQLSession { (session: Session, transport: ScriptedTransport, log: inout ScriptedLog) async throws in
            let inFlight = Task { try await session.publish(["query": "mutation { a }"], to: "m") }
            #expect(await log.nextSent() == #"{"id":"p1","payload":{"query":"mutation { a }"},"type":"subscribe"}"#)
            // A working connection (stable after 5 s), the mutation still within its 10 s.
            await clock.advance(by: .seconds(6))
            transport.closeFromServer(nil)
            let error = await #expect(throws: SessionError.self) { try await inFlight.value }
            #expect(error?.code == .connectionLost)
            #expect(error?.message.contains("may have been applied") == true)
            let queued = Task { try await session.publish(["query": "mutation { b }"], to: "m") }
            var skipped: [ScriptedTransport.Event] = []
            #expect(await log.nextSent(skipped: &skipped) == #"{"payload":{"token":"test-token"},"type":"connection_init"}"#)
            transport.push(#"{"type":"connection_ack"}"#)
            #expect(await log.nextSent() == #"{"id":"p1","payload":{"query":"mutation { b }"},"type":"subscribe"}"#, "only the unsent one: mutation a is never sent twice")
            transport.push(#"{"id":"p1","type":"complete"}"#)
            #expect(try await queued.value == PublishReceipt(.acknowledged))
        }
    }

    @Test("graphql-transport-ws: the app's disconnect() completes each live subscription before the close; a lost connection gets none")
    func goodbye() async throws {
        try await withGraphQLSession { (session: Session, transport: ScriptedTransport, log: inout ScriptedLog) async throws in
            let subscription = try await session.subscribe(to: Topic.graphQL("messages", query: "subscription { messages { text } }"))
            _ = await log.nextSent()
            await session.disconnect()
            #expect(await log.next() == .sent(#"{"id":"s1","type":"complete"}"#))
            #expect(await log.next() == .closed(.normal))
            let connecting = Task { try await session.connect() }
            _ = await log.nextSent()  // connection_init
            transport.push(#"{"type":"connection_ack"}"#)
            try await connecting.value
            _ = await log.nextSent()  // the resubscribe
            transport.closeFromServer(.goingAway)
            #expect(await log.next() == .closed(.normal), "a lost connection is just closed: no goodbye")
            _ = subscription
        }
    }

    @Test("graphql-transport-ws: an error for a subscription already counted as made ends it, rejected")
    func lateSubscriptionError() async throws {
        try await withGraphQLSession { (session: Session, transport: ScriptedTransport, log: inout ScriptedLog) async throws in
            var messages = try await session.subscribe(to: Topic.graphQL("bad", query: "subscription { nope }")).makeAsyncIterator()
            _ = await log.nextSent()
            transport.push(#"{"id":"s1","type":"error","payload":[{"message":"Cannot query field 'nope'"}]}"#)
            let error = await #expect(throws: SessionError.self) { _ = try await messages.next() }
            #expect(error?.code == .rejected)
            #expect(error?.message.contains("Cannot query field 'nope'") == true)
            #expect(session.subscribedChannels.isEmpty)
            #expect(session.status == .connected, "the connection stays")
        }
    }

    @Test("subscribing again to a held name with other options is refused, typed")
    func conflictingOptions() async throws {
        let session = try session(ScriptedTransport(subprotocol: "graphql-transport-ws")) { $0.serverProtocol(.graphQLTransportWS()) }
        _ = try await session.subscribe(to: Topic.graphQL("feed", query: "subscription { a }"))
        let error = await #expect(throws: SessionError.self) { _ = try await session.subscribe(to: Topic.graphQL("feed", query: "subscription { b }")) }
        #expect(error?.code == .invalidArgument)
        _ = try await session.subscribe(to: Topic.graphQL("feed", query: "subscription { a }"))
    }

    @Test("a server that does not choose the offered subprotocol: disconnected, not retried, one socket")
    func wrongSubprotocol() async throws {
        let transport = ScriptedTransport(subprotocol: nil)
        let session = try session(transport) { $0.serverProtocol(.graphQLTransportWS()) }
        let log = ScriptedLog(transport)
        try await withRunningSession(session) { status in
            let seen = try await status.waitFor { if case .disconnected(let reason) = $0 { reason.code == .error } else { false } }
            #expect(seen.last.map { "\($0)" }?.contains("subprotocol none, not graphql-transport-ws") == true)
            await clock.advance(by: .seconds(3600))
            #expect(await log.next() == .opened(endpoint, subprotocols: ["graphql-transport-ws"]))
            #expect(await log.next() == .closed(.protocolError))
            #expect(session.status == seen.last, "no retry")
            #expect(transport.openCount == 1, "one socket, in an hour")
            #expect(session.armedTimers == [])
        }
    }

    @Test("an upgrade refused with 403 is rejected credentials (no retry); with 503 it is retried", arguments: [403, 503])
    func refusedUpgrade(status code: Int) async throws {
        let refusal = TransportError(.handshakeFailed, "the server answered \(code)", httpStatus: code)
        let transport = ScriptedTransport(subprotocol: "graphql-transport-ws", refusals: [refusal])
        let session = try session(transport) { $0.serverProtocol(.graphQLTransportWS()) }
        let log = ScriptedLog(transport)
        try await withRunningSession(session) { status in
            if code == 403 {
                try await status.waitFor { if case .disconnected(let reason) = $0 { reason.code == .credentialsRejected } else { false } }
                await clock.advance(by: .seconds(3600))
                #expect(session.status == .disconnected(DisconnectReason(.credentialsRejected, detail: "the server refused the WebSocket upgrade with HTTP 403")))
            } else {
                try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
                await clock.advance(by: .milliseconds(500))
                #expect(await log.next() == .opened(endpoint, subprotocols: ["graphql-transport-ws"]))
                #expect(await log.next() == .opened(endpoint, subprotocols: ["graphql-transport-ws"]), "retried after the backoff")
            }
        }
    }

    @Test("Socket.IO: unnumbered messages, a publish without an ack ends sentUnconfirmed, and a token in the URL never reaches a log line")
    func socketIO() async throws {
        let tokenURL = "ws://127.0.0.1:9/socket.io/?EIO=4&transport=websocket&token=test-token"
        let transport = ScriptedTransport(refusals: [TransportError(.connectionFailed, "could not reach \(tokenURL)")])
        let lines = Locked([String]())
        let session = try session(transport) {
            $0.serverProtocol(.socketIO(acknowledgesPublishes: false, credentialsInQuery: "token"))
                .logging(minimumLevel: .debug) { record in lines.withLock { $0.append(record.message) } }
        }
        let log = ScriptedLog(transport)
        var texts = [session.settings.description, String(reflecting: session.settings)]
        try await withRunningSession(session) { status in
            #expect(await log.next() == .opened(URL(string: tokenURL)!, subprotocols: []))
            let failed = try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
            #expect("\(failed.last!)".contains("token=<redacted>"), "the transport's error is reported, redacted: \(failed.last!)")
            await clock.advance(by: .milliseconds(500))
            #expect(await log.next() == .opened(URL(string: tokenURL)!, subprotocols: []))
            transport.push(#"0{"sid":"a","upgrades":[],"pingTimeout":3000,"pingInterval":5000,"maxPayload":1000000}"#)
            #expect(await log.nextSent() == #"40{"token":"test-token"}"#)
            transport.push(#"40{"sid":"b"}"#)
            try await status.waitFor(.connected)

            let joining = Task { try await session.subscribe(to: "room-1") }
            #expect(await log.nextSent() == #"420["join","room-1"]"#)
            transport.push(#"430[{"ok":true}]"#)
            var messages = try await joining.value.makeAsyncIterator()
            transport.push(#"42["message",{"room":"room-1","text":"hi"}]"#)
            #expect(try await messages.next() == ChannelMessage(channel: "room-1", sequence: nil, data: ["room": "room-1", "text": "hi"]))

            let receipt = try await session.publish(["text": "yo"], to: "room-1")
            #expect(receipt == PublishReceipt(.sentUnconfirmed))
            #expect(!receipt.isAcknowledged)
            #expect(await log.nextSent() == #"42["publish",{"room":"room-1","text":"yo"}]"#)
            texts += await status.history.flatMap { [String(describing: $0), String(reflecting: $0)] }
        }
        let logged = lines.withLock { $0 }
        #expect(texts.count > 6)
        for text in texts { #expect(!text.contains("test-token"), "leaked in: \(text)") }
        #expect(logged.contains { $0.contains("socket.io/?EIO=4&transport=websocket&token=<redacted>") }, "the URL is logged, redacted")
        #expect(logged.contains { $0.contains("could not reach") }, "so is the failure")
        #expect(!logged.contains { $0.contains("test-token") }, "and never the token")
    }

    @Test("Socket.IO: no client heartbeat; the foreground probe waits for the server's next packet, bounded by the watchdog")
    func socketIOLiveness() async throws {
        let transport = ScriptedTransport()
        let session = try session(transport, auto: false) {
            $0.serverProtocol(.socketIO()).heartbeat(interval: .seconds(1), timeout: .seconds(1))
        }
        let log = ScriptedLog(transport)
        try await withRunningSession(session) { status in
            let connecting = Task { try await session.connect() }
            _ = await log.next()
            transport.push(#"0{"sid":"a","upgrades":[],"pingTimeout":3000,"pingInterval":5000,"maxPayload":1000000}"#)
            _ = await log.nextSent()
            transport.push("40")
            try await connecting.value
            #expect(session.armedTimers == [.protocolTimer("socket.io-heartbeat")], "the server's heartbeat is watched; the client runs none")
            await session.setAppState(.background)
            await session.setAppState(.active)
            #expect(session.armedTimers == [.protocolTimer("socket.io-heartbeat")], "the probe has no shorter timeout of its own")
            transport.push("2")
            #expect(await log.nextSent() == "3")
            #expect(session.status == .connected)
            // Silence past pingInterval + pingTimeout: the watchdog finds the dead link.
            await clock.advance(by: .seconds(8))
            try await status.waitFor { if case .reconnecting(let reason) = $0 { reason.code == .networkLost } else { false } }
        }
    }
}

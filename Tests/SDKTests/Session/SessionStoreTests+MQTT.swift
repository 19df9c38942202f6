import ConnectionPolicy
import Foundation
@testable import SDK
import SDKTesting
import Testing

extension SessionStoreTests {
    /// An MQTT launch of the app on `store` (the session makes its client id), with the broker's
    /// side of its transport.
    func mqttLaunch(_ store: InMemorySessionStore) throws -> (Session, ScriptedTransport, SessionMQTTTests.Broker) {
        let transport = ScriptedTransport(subprotocol: "mqtt")
        let session = Session(settings: try .testing { $0.serverProtocol(.mqtt()).store(store) }, transport: transport, clock: clock)
        return (session, transport, SessionMQTTTests.Broker(log: ScriptedLog(transport)))
    }

    @Test("MQTT across a kill: the relaunch connects with the same client id, and re-sends the unacknowledged QoS 1 publish with DUP and its packet id")
    func mqttSessionAcrossKill() async throws {
        let store = InMemorySessionStore()
        let (first, transport, firstBroker) = try mqttLaunch(store)
        var broker = firstBroker
        var clientID = ""
        var sent: MQTTPublish?
        try await withRunningSession(first) { status in
            guard case .connect(let connect)? = await broker.next() else { Issue.record("no CONNECT"); return }
            clientID = connect.clientID
            SessionMQTTTests.push(transport, .connack(sessionPresent: false, code: 0, properties: MQTTProperties()))
            try await status.waitFor(.connected)
            _ = Task { try await first.publish(["text": "hi"], to: "chat/1") }
            guard case .publish(let publish)? = await broker.next() else { Issue.record("no PUBLISH"); return }
            sent = publish
            transport.closeFromServer(.goingAway)  // the PUBACK never comes; the socket's state is kept
            try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
            await clock.settle()
            store.kill()
        }
        #expect(clientID.hasPrefix("tether-"), "a client id the session made: \(clientID)")
        let (second, again, secondBroker) = try mqttLaunch(store.relaunched())
        var relaunchedBroker = secondBroker
        try await withRunningSession(second) { status in
            let outcomes = PatientReader(second.earlierPublishOutcomes)
            guard case .connect(let connect)? = await relaunchedBroker.next() else { Issue.record("no CONNECT"); return }
            #expect(connect.clientID == clientID && !connect.cleanStart, "the broker's session goes on")
            SessionMQTTTests.push(again, .connack(sessionPresent: true, code: 0, properties: MQTTProperties()))
            var packet = await relaunchedBroker.next()
            if packet == .pingreq { packet = await relaunchedBroker.next() }
            var dup = try #require(sent)
            dup.duplicate = true
            #expect(packet == .publish(dup), "re-sent with DUP and its packet id")
            SessionMQTTTests.push(again, .puback(dup.packetID ?? 0, code: 0))
            #expect(try #require(await outcomes.next()).state == .acknowledged(PublishReceipt(.acknowledged)))
            _ = status
        }
    }
}

extension SessionStoreTests {
    @Test("MQTT with a store: a message is acknowledged to the broker once the app has finished it, so a kill before then has the broker's session bring it again")
    func mqttAcknowledgesWhatTheAppFinished() async throws {
        let transport = ScriptedTransport(subprotocol: "mqtt")
        let store = InMemorySessionStore()
        let session = Session(settings: try .testing { $0.serverProtocol(.mqtt(clientID: "phone")).store(store) }, transport: transport, clock: clock)
        var broker = SessionMQTTTests.Broker(log: ScriptedLog(transport))
        try await withRunningSession(session) { status in
            guard case .connect? = await broker.next() else { Issue.record("no CONNECT"); return }
            SessionMQTTTests.push(transport, .connack(sessionPresent: false, code: 0, properties: MQTTProperties()))
            try await status.waitFor(.connected)
            let subscribing = Task { try await session.subscribe(to: "chat/1") }
            #expect(await broker.next() == .subscribe(1, [("chat/1", .atLeastOnce)]))
            SessionMQTTTests.push(transport, .suback(1, codes: [1]))
            var messages = try await subscribing.value.makeAsyncIterator()
            await clock.settle()
            let kept = store.records.compactMap(StoreRecord.decoded)
            #expect(kept.contains { if case .finished("chat/1", let position, _) = $0 { position.sequence == 0 } else { false } },
                    "where the subscription began is kept at once: a relaunch resumes from it, not from the first message handed over")
            let sentBefore = transport.sentCount
            SessionMQTTTests.push(transport, .publish(MQTTPublish(topic: "chat/1", payload: Array("1".utf8), qos: .atLeastOnce, packetID: 40)))
            #expect(try await messages.next()?.data == ["topic": "chat/1", "payload": 1])
            await clock.settle()
            #expect(transport.sentCount == sentBefore, "handed to the app, not finished: not acknowledged")
            SessionMQTTTests.push(transport, .publish(MQTTPublish(topic: "chat/1", payload: Array("2".utf8), qos: .atLeastOnce, packetID: 41)))
            #expect(try await messages.next()?.data == ["topic": "chat/1", "payload": 2])
            #expect(await broker.next() == .puback(40, code: 0), "the app asked for the next one: the first is finished")
            await clock.settle()
            #expect(transport.sentCount == sentBefore + 1, "the second is not finished yet")
        }
    }
}

extension SessionStoreTests {
    @Test("MQTT, killed while its first socket is open: the client id the session made and the filters the broker holds were kept as the socket became ready and the subscription was made, so the relaunch goes on with the broker's session (same client id, no SUBSCRIBE)")
    func mqttKilledOnItsFirstSocket() async throws {
        let store = InMemorySessionStore()
        let (first, transport, firstBroker) = try mqttLaunch(store)
        var broker = firstBroker
        var clientID = ""
        try await withRunningSession(first) { status in
            guard case .connect(let connect)? = await broker.next() else { Issue.record("no CONNECT"); return }
            clientID = connect.clientID
            SessionMQTTTests.push(transport, .connack(sessionPresent: false, code: 0, properties: MQTTProperties()))
            try await status.waitFor(.connected)
            await clock.settle()
            #expect(store.records.compactMap(StoreRecord.decoded).contains { if case .wireState(.some) = $0 { true } else { false } },
                    "kept as the socket became ready: a kill now relaunches with this client id")
            let subscribing = Task { try await first.subscribe(to: "chat/1") }
            #expect(await broker.next() == .subscribe(1, [("chat/1", .atLeastOnce)]))
            SessionMQTTTests.push(transport, .suback(1, codes: [1]))
            _ = try await subscribing.value
            await clock.settle()
            store.kill()  // the socket still open
        }
        let (second, again, secondBroker) = try mqttLaunch(store.relaunched())
        var relaunchedBroker = secondBroker
        try await withRunningSession(second) { status in
            let subscribing = Task { try await second.subscribe(to: "chat/1") }
            guard case .connect(let connect)? = await relaunchedBroker.next() else { Issue.record("no CONNECT"); return }
            try #require(connect.clientID == clientID, "the same client id: \(connect.clientID), not \(clientID)")
            SessionMQTTTests.push(again, .connack(sessionPresent: true, code: 0, properties: MQTTProperties()))
            try #require(await relaunchedBroker.next() == .pingreq, "the backlog marker")
            SessionMQTTTests.push(again, .pingresp)
            let pinging = Task { try await second.ping() }
            try #require(await relaunchedBroker.next() == .pingreq, "no SUBSCRIBE before the app's ping: the broker holds chat/1")
            SessionMQTTTests.push(again, .pingresp)
            try await pinging.value
            _ = try await subscribing.value
            try await status.waitFor(.connected)
        }
    }
}

extension SessionStoreTests {
    @Test("MQTT with a store, the socket lost while the app holds a message: the next socket does not deliver the broker's re-send (DUP) again, and acknowledges it because the app finished it between the sockets")
    func mqttUnfinishedAcrossSockets() async throws {
        let transport = ScriptedTransport(subprotocol: "mqtt")
        let session = Session(settings: try .testing { $0.serverProtocol(.mqtt(clientID: "phone")).store(InMemorySessionStore()) }, transport: transport, clock: clock)
        var broker = SessionMQTTTests.Broker(log: ScriptedLog(transport))
        try await withRunningSession(session) { status in
            guard let (reader, open, finishes) = try await lostWhileHolding(session, transport, &broker, status) else { return }
            open.yield()  // the app asks for the next message: "1" is finished, with no socket made yet
            // The reader runs on a task of its own: wait until it has told the session, then
            // until the session has handled it (waiting for the session alone raced the reader).
            var finished = finishes.makeAsyncIterator()
            await finished.next()
            await clock.settle()
            broker.decoder = MQTTStreamDecoder(version: .v3_1_1, maximumPacketSize: 1 << 20)
            SessionMQTTTests.push(transport, .connack(sessionPresent: true, code: 0, properties: MQTTProperties()))
            let marker = await broker.next()
            #expect(marker == .pingreq, "the backlog marker, not \(String(describing: marker))")
            SessionMQTTTests.push(transport, .publish(MQTTPublish(topic: "chat/1", payload: Array("1".utf8), qos: .atLeastOnce, duplicate: true, packetID: 40)), .pingresp)
            // The next packet the session sends: nothing else is due before it. (A ping asked
            // for here raced the session's handling of the two packets above: a settled clock
            // does not wait for a transport's reader to hand them over.)
            let acknowledgement = await broker.next()
            #expect(acknowledgement == .puback(40, code: 0), "the app asked for the next message while no socket was open: finished, acknowledged as the subscription is made; got \(String(describing: acknowledgement))")
            let pinging = Task { try await session.ping() }
            #expect(await broker.next() == .pingreq, "nothing else sent")
            SessionMQTTTests.push(transport, .pingresp, .publish(MQTTPublish(topic: "chat/1", payload: Array("2".utf8), qos: .atLeastOnce, packetID: 41)))
            try await pinging.value
            #expect(try await reader.value == [["topic": "chat/1", "payload": 1], ["topic": "chat/1", "payload": 2]], "the re-send is not delivered again")
        }
    }
}

extension SessionStoreTests {
    @Test("MQTT with a store, the socket lost while the app holds a message it has not finished: the next socket's subscription does not acknowledge the broker's re-send; the app finishing it does")
    func mqttUnfinishedStaysUnacknowledgedAcrossSockets() async throws {
        let transport = ScriptedTransport(subprotocol: "mqtt")
        let session = Session(settings: try .testing { $0.serverProtocol(.mqtt(clientID: "phone")).store(InMemorySessionStore()) }, transport: transport, clock: clock)
        var broker = SessionMQTTTests.Broker(log: ScriptedLog(transport))
        try await withRunningSession(session) { status in
            guard let (reader, open, _) = try await lostWhileHolding(session, transport, &broker, status) else { return }
            broker.decoder = MQTTStreamDecoder(version: .v3_1_1, maximumPacketSize: 1 << 20)
            SessionMQTTTests.push(transport, .connack(sessionPresent: true, code: 0, properties: MQTTProperties()))
            let marker = await broker.next()
            #expect(marker == .pingreq, "the backlog marker, not \(String(describing: marker))")
            SessionMQTTTests.push(transport, .publish(MQTTPublish(topic: "chat/1", payload: Array("1".utf8), qos: .atLeastOnce, duplicate: true, packetID: 40)), .pingresp)
            await clock.settle()
            let pinging = Task { try await session.ping() }
            let next = await broker.next()
            #expect(next == .pingreq, "still unfinished on the new socket: no PUBACK for the re-send before the app finished it, got \(String(describing: next))")
            SessionMQTTTests.push(transport, .pingresp)
            try await pinging.value
            open.yield()  // the app asks for the next message: "1" is finished now
            #expect(await broker.next() == .puback(40, code: 0), "acknowledged once the app finished it")
            SessionMQTTTests.push(transport, .publish(MQTTPublish(topic: "chat/1", payload: Array("2".utf8), qos: .atLeastOnce, packetID: 41)))
            #expect(try await reader.value == [["topic": "chat/1", "payload": 1], ["topic": "chat/1", "payload": 2]], "the re-send is not delivered again")
        }
    }

    @Test("a compaction keeps the protocol's session state: after the store is written whole, a relaunch connects into the broker's session with the same client id")
    func compactionKeepsTheBrokerSession() async throws {
        let store = InMemorySessionStore()
        let (first, transport, firstBroker) = try mqttLaunch(store)
        var broker = firstBroker
        var clientID = ""
        try await withRunningSession(first) { status in
            guard case .connect(let connect)? = await broker.next() else { Issue.record("no CONNECT"); return }
            clientID = connect.clientID
            SessionMQTTTests.push(transport, .connack(sessionPresent: false, code: 0, properties: MQTTProperties()))
            try await status.waitFor(.connected)
            await clock.settle()
            // A write that fails: the next one writes the whole state, as a compaction does.
            store.failWrites(with: SessionStoreError(.diskFull, "full"))
            let subscribing = Task { try await first.subscribe(to: "chat/1") }
            guard case .subscribe(let packetID, _)? = await broker.next() else { Issue.record("no SUBSCRIBE"); return }
            SessionMQTTTests.push(transport, .suback(packetID, codes: [1]))
            _ = try await subscribing.value
            store.failWrites(with: nil)
            let publishing = Task { try await first.publish("after", to: "chat/1") }
            guard case .publish(let publish)? = await broker.next() else { Issue.record("no PUBLISH"); return }
            SessionMQTTTests.push(transport, .puback(publish.packetID ?? 0, code: 0))
            _ = try await publishing.value
            await clock.settle()
            #expect(store.writeCounts.replaces >= 1, "written whole")
            store.kill()
        }
        let (second, _, secondBroker) = try mqttLaunch(store.relaunched())
        var relaunchedBroker = secondBroker
        try await withRunningSession(second) { _ in
            guard case .connect(let connect)? = await relaunchedBroker.next() else { Issue.record("no CONNECT"); return }
            #expect(connect.clientID == clientID && !connect.cleanStart, "the broker's session survived the compaction: \(connect.clientID)")
        }
    }
}

extension SessionStoreTests {
    /// An MQTT session with a store (client id "phone"), subscribed to chat/1 at QoS 1: the broker
    /// sends "1" (packet 40), the app takes it and does not ask for the next one, and the socket is
    /// lost. Returns at the second CONNECT, with the app's reader (it returns "1" and the message
    /// after it, asking for that one once `open` yields); `nil` with an issue recorded if the
    /// broker did not see what it should.
    func lostWhileHolding(
        _ session: Session, _ transport: ScriptedTransport, _ broker: inout SessionMQTTTests.Broker, _ status: StatusRecorder
    ) async throws -> (reader: Task<[JSONValue?], any Error>, open: AsyncStream<Void>.Continuation, finishes: AsyncStream<Void>)? {
        guard case .connect? = await broker.next() else {
            Issue.record("no CONNECT")
            return nil
        }
        SessionMQTTTests.push(transport, .connack(sessionPresent: false, code: 0, properties: MQTTProperties()))
        try await status.waitFor(.connected)
        let subscribing = Task { try await session.subscribe(to: "chat/1") }
        #expect(await broker.next() == .subscribe(1, [("chat/1", .atLeastOnce)]))
        SessionMQTTTests.push(transport, .suback(1, codes: [1]))
        let subscription = try await subscribing.value
        // The same subscription, its finished batches also told to the test (`finishes`), once
        // the session has been told.
        let (finishes, finished) = AsyncStream<Void>.makeStream()
        let subscriber = Subscription(
            channel: subscription.channel, batches: subscription.batches, backlog: subscription.backlog,
            batchFinished: {
                subscription.batchFinished?()
                finished.yield()
            },
            drained: subscription.drained
        )
        let (gate, open) = AsyncStream<Void>.makeStream()
        let reader = Task {
            var messages = subscriber.makeAsyncIterator()
            let first = try await messages.next()?.data
            for await _ in gate { break }
            return [first, try await messages.next()?.data]
        }
        SessionMQTTTests.push(transport, .publish(MQTTPublish(topic: "chat/1", payload: Array("1".utf8), qos: .atLeastOnce, packetID: 40)))
        await clock.settle()
        transport.closeFromServer(.goingAway)  // "1" handed over, not finished: no PUBACK
        try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
        await clock.settle()
        await clock.advance(by: .seconds(1))  // the first retry's delay (500 ms, no jitter)
        guard case .connect? = await broker.next() else {
            Issue.record("no second CONNECT")
            return nil
        }
        return (reader, open, finishes)
    }
}

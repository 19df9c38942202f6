import ConnectionPolicy
import Foundation
@testable import SDK
import SDKTesting
import Testing

/// The session over the MQTT adapter, the test playing the broker packet by packet on the test
/// clock: the session's state crossing sockets (the core hands it from one machine to the
/// next), the resume without a resubscribe, the catch-up counted, and a QoS 1 publish whose
/// PUBACK was lost re-sent with DUP and its packet id.
@Suite("Session: MQTT", .timeLimit(.minutes(1)))
struct SessionMQTTTests {
    let clock = TestClock()

    /// Reads the broker's side: every packet the session sends, in order.
    struct Broker {
        var log: ScriptedLog
        var decoder = MQTTStreamDecoder(version: .v3_1_1, maximumPacketSize: 1 << 20)
        var pending: [MQTTPacket] = []
        /// Opens and closes seen on the way.
        var skipped: [ScriptedTransport.Event] = []

        mutating func next() async -> MQTTPacket? {
            while pending.isEmpty {
                guard let bytes = await log.nextBinary(skipped: &skipped) else { return nil }
                pending = (try? decoder.append(bytes)) ?? []
            }
            return pending.removeFirst()
        }
    }

    static func push(_ transport: ScriptedTransport, _ packets: MQTTPacket...) {
        transport.push(binary: packets.flatMap { $0.encoded(.v3_1_1) })
    }

    @Test("after a drop: CONNACK says the session is present → no SUBSCRIBE; the queued message is delivered and counted caught up, then PUBACKed; the publish whose PUBACK was lost goes again with DUP and its id")
    func resume() async throws {
        let transport = ScriptedTransport(subprotocol: "mqtt")
        let session = Session(settings: try .testing { $0.serverProtocol(.mqtt(clientID: "phone")) }, transport: transport, clock: clock)
        var broker = Broker(log: ScriptedLog(transport))
        let reports = PatientReader(session.recoveryReports)
        try await withRunningSession(session) { status in
            #expect(await broker.next() == .connect(MQTTConnect(clientID: "phone", cleanStart: false, keepAlive: 60, password: Array("test-token".utf8))))
            Self.push(transport, .connack(sessionPresent: false, code: 0, properties: MQTTProperties()))
            try await status.waitFor(.connected)
            _ = await reports.next()
            let subscribing = Task { try await session.subscribe(to: "chat/1") }
            #expect(await broker.next() == .subscribe(1, [("chat/1", .atLeastOnce)]))
            Self.push(transport, .suback(1, codes: [1]))
            var messages = try await subscribing.value.makeAsyncIterator()
            Self.push(transport, .publish(MQTTPublish(topic: "chat/1", payload: Array("1".utf8), qos: .atLeastOnce, packetID: 40)))
            #expect(try await messages.next() == ChannelMessage(channel: "chat/1", sequence: 1, data: ["topic": "chat/1", "payload": 1]))
            #expect(await broker.next() == .puback(40, code: 0), "acknowledged after it was delivered")
            await clock.advance(by: .seconds(60))  // a working connection: its loss is retried at once
            #expect(await broker.next() == .pingreq, "the keep-alive, at ¾ of 60 s")
            Self.push(transport, .pingresp)

            let publishing = Task { try await session.publish(["text": "hi"], to: "chat/1") }
            let sent = MQTTPublish(topic: "chat/1", payload: Array(#"{"text":"hi"}"#.utf8), qos: .atLeastOnce, packetID: 2)
            #expect(await broker.next() == .publish(sent))
            transport.closeFromServer(.goingAway)  // the PUBACK never comes

            #expect(await broker.next() == .connect(MQTTConnect(clientID: "phone", cleanStart: false, keepAlive: 60, password: Array("test-token".utf8))))
            #expect(broker.skipped.suffix(2) == [.closed(.normal), .opened(URL(string: "ws://127.0.0.1:9/")!, subprotocols: ["mqtt"])], "one socket at a time: \(broker.skipped)")
            broker.decoder = MQTTStreamDecoder(version: .v3_1_1, maximumPacketSize: 1 << 20)
            Self.push(transport, .connack(sessionPresent: true, code: 0, properties: MQTTProperties()))
            #expect(await broker.next() == .pingreq, "the backlog marker, and no SUBSCRIBE: the broker holds it")
            Self.push(transport, .publish(MQTTPublish(topic: "chat/1", payload: Array("2".utf8), qos: .atLeastOnce, packetID: 41)), .pingresp)
            var dup = sent
            dup.duplicate = true
            #expect(await broker.next() == .publish(dup), "re-sent after the replay, with DUP and its packet id")
            #expect(await broker.next() == .puback(41, code: 0))
            #expect(try await messages.next() == ChannelMessage(channel: "chat/1", sequence: 2, data: ["topic": "chat/1", "payload": 2]))
            Self.push(transport, .puback(2, code: 0))
            #expect(try await publishing.value == PublishReceipt(.acknowledged))
            let report = try #require(await reports.next())
            #expect(report.trigger == .reconnect)
            #expect(report.caughtUp == ["chat/1": 1] && report.refetch.isEmpty && report.isComplete, "\(report)")
            #expect(report.outboxFlushed == 1)
        }
    }

    @Test("a subscribe given up on (no SUBACK in time) is ended on the broker: UNSUBSCRIBE follows, the late SUBACK makes nothing, and what the broker sent on it meanwhile is acknowledged rather than holding back every later PUBACK")
    func subscribeGivenUpOn() async throws {
        let transport = ScriptedTransport(subprotocol: "mqtt")
        let session = Session(settings: try .testing { $0.serverProtocol(.mqtt(clientID: "phone")).requestTimeout(.seconds(5)) }, transport: transport, clock: clock)
        var broker = Broker(log: ScriptedLog(transport))
        try await withRunningSession(session) { status in
            #expect(await broker.next()?.type == 1, "CONNECT")
            Self.push(transport, .connack(sessionPresent: false, code: 0, properties: MQTTProperties()))
            try await status.waitFor(.connected)
            let subscribing = Task { try await session.subscribe(to: "chat/1") }
            #expect(await broker.next() == .subscribe(1, [("chat/1", .atLeastOnce)]))
            await clock.advance(by: .seconds(5))
            await #expect(throws: SessionError.self) { _ = try await subscribing.value }
            // A ping after it: the packet before its PINGREQ is what the timeout sent, if anything.
            let pinging = Task { try await session.ping() }
            try #require(await broker.next() == .unsubscribe(2, ["chat/1"]), "the subscription given up on is ended on the broker")
            #expect(await broker.next() == .pingreq)
            Self.push(transport, .pingresp)
            try await pinging.value

            // The broker made it after all, and delivered on it before the UNSUBSCRIBE reached it.
            Self.push(transport, .suback(1, codes: [1]), .publish(MQTTPublish(topic: "chat/1", payload: Array("1".utf8), qos: .atLeastOnce, packetID: 40)))
            await clock.settle()
            let again = Task { try await session.subscribe(to: "chat/2") }
            try #require(await broker.next() == .puback(40, code: 0), "no subscription is left to finish it: acknowledged at once")
            #expect(await broker.next() == .subscribe(3, [("chat/2", .atLeastOnce)]), "and the late SUBACK made nothing to answer")
            Self.push(transport, .unsuback(2, codes: [0]), .suback(3, codes: [1]))
            var messages = try await again.value.makeAsyncIterator()
            Self.push(transport, .publish(MQTTPublish(topic: "chat/2", payload: Array("2".utf8), qos: .atLeastOnce, packetID: 41)))
            #expect(try await messages.next() == ChannelMessage(channel: "chat/2", sequence: 1, data: ["topic": "chat/2", "payload": 2]))
            #expect(await broker.next() == .puback(41, code: 0))
        }
    }
}

import ConnectionPolicy
@testable import SDK
import SDKTesting
import Testing

extension SubscriberTests {
    @Test("on a protocol that cannot send a channel's messages again (MQTT) a subscriber past its bound gets what it holds, then subscriberFellBehind; the channel's other subscriber goes on")
    func fellBehindWithoutCatchUp() async throws {
        let transport = ScriptedTransport(subprotocol: "mqtt")
        let settings = try AppSettings.testing { $0.serverProtocol(.mqtt(clientID: "phone", qos: .atMostOnce)).subscriberBufferLimit(3) }
        let session = Session(settings: settings, transport: transport, clock: clock)
        var broker = SessionMQTTTests.Broker(log: ScriptedLog(transport))
        try await withRunningSession(session) { status in
            guard case .connect? = await broker.next() else { Issue.record("no CONNECT"); return }
            SessionMQTTTests.push(transport, .connack(sessionPresent: false, code: 0, properties: MQTTProperties()))
            try await status.waitFor(.connected)
            let subscribing = Task { try await session.subscribe(to: "room") }
            guard case .subscribe(let packetID, _)? = await broker.next() else { Issue.record("no SUBSCRIBE"); return }
            SessionMQTTTests.push(transport, .suback(packetID, codes: [0]))
            let behind = try await subscribing.value
            let reader = try await session.subscribe(to: "room")
            let reading = PatientReader(messagesOf: reader)
            for n in 1...4 {
                SessionMQTTTests.push(transport, .publish(MQTTPublish(topic: "room", payload: Array("\(n)".utf8), qos: .atMostOnce)))
                #expect(await reading.next()?.data == ["topic": "room", "payload": JSONValue(n)])
            }
            let held = PatientReader(rest: behind.makeAsyncIterator())
            for n in 1...3 { #expect(await held.nextData() == ["topic": "room", "payload": JSONValue(n)]) }
            let error = await held.nextError()
            #expect(error?.code == .subscriberFellBehind && error?.message.contains("cannot send the channel's messages again") == true, "\(String(describing: error))")
            SessionMQTTTests.push(transport, .publish(MQTTPublish(topic: "room", payload: Array("5".utf8), qos: .atMostOnce)))
            #expect(await reading.next()?.data == ["topic": "room", "payload": 5])
        }
    }

    @Test("the bound counts bytes too: a few large messages hold a subscriber back long before the message count does, and it is caught up all the same")
    func byteBound() async throws {
        let server = TestServer()
        let settings = try AppSettings.testing { $0.subscriberBufferLimit(1000).subscriberBufferBytes(4096) }
        let session = Session(settings: settings, transport: server.transport(), clock: clock)
        let large = JSONValue.string(String(repeating: "x", count: 1500))
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            for _ in 1...4 {
                try server.publish(large, to: "room")
                await clock.settle()
            }
            #expect(server.subscriberCount(of: "room") == 0, "about 6 KB unread past 4 KB: held back, the channel left")
            let messages = PatientReader(messagesOf: room)
            for sequence in 1...4 {
                let message = await messages.next()
                #expect(message?.sequence == UInt64(sequence) && message?.data == large)
            }
            #expect(server.subscriberCount(of: "room") == 1)
        }
    }
}

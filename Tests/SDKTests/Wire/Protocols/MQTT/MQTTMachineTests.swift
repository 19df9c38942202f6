import ConnectionPolicy
import Foundation
@testable import SDK
import Testing

/// The MQTT machine, table by table: a broker's packets in, the core's actions out. No task, no
/// clock, no socket.
@Suite("MQTT machine")
struct MQTTMachineTests {
    static let config = MQTT(clientID: "tether-probe", username: "app")

    /// The packets among `actions`' sends, decoded as the broker would.
    static func packets(_ actions: [WireAction], _ version: MQTTVersion = .v3_1_1) -> [MQTTPacket] {
        actions.flatMap { action -> [MQTTPacket] in
            guard case .send(.binary(let bytes)) = action else { return [] }
            var decoder = MQTTStreamDecoder(version: version, maximumPacketSize: 1 << 20)
            return (try? decoder.append(bytes)) ?? []
        }
    }

    static func frame(_ packets: MQTTPacket..., version: MQTTVersion = .v3_1_1) -> TransportFrame {
        .binary(packets.flatMap { $0.encoded(version) })
    }

    static func connected(_ config: MQTT = config, state: MQTTSessionState? = nil, sessionPresent: Bool = false) -> MQTT.Machine {
        var machine = config.makeMachine(continuing: state)
        expectKinds(machine.start(credentials: Secret("s3cret")), [.send])
        // The keep-alive armed and ready, with any publish of the continued session re-sent between.
        let connack = machine.receive(frame(.connack(sessionPresent: sessionPresent, code: 0, properties: MQTTProperties()), version: config.version))
        _ = frames(of: connack, besides: [.arm(MQTT.keepAliveTimer, after: .seconds(45)), .ready], sourceLocation: #_sourceLocation)
        return machine
    }

    static func message(_ topic: String, _ text: String, id: UInt16?, duplicate: Bool = false) -> MQTTPacket {
        .publish(MQTTPublish(topic: topic, payload: Array(text.utf8), qos: id == nil ? .atMostOnce : .atLeastOnce, duplicate: duplicate, packetID: id))
    }

    static func data(_ topic: String, _ payload: JSONValue) -> JSONValue { ["topic": .string(topic), "payload": payload] }

    /// Subscribes `id` to `filter` and answers its SUBACK.
    static func subscribed(_ machine: inout MQTT.Machine, _ id: SubscriptionID, _ filter: String) {
        let sent = packets(machine.perform(.subscribe(id, Topic(filter), resume: nil)))
        guard case .subscribe(let packetID, _)? = sent.first else {
            Issue.record("no SUBSCRIBE: \(sent)")
            return
        }
        expectKinds(machine.receive(frame(.suback(packetID, codes: [1]))), [.subscribed])
    }

    @Test("CONNECT carries the client id, the session, the keep-alive and the credentials; CONNACK makes it ready and releases held commands")
    func handshake() {
        var machine = Self.config.makeMachine()
        let started = machine.start(credentials: Secret("s3cret"))
        #expect(Self.packets(started) == [.connect(MQTTConnect(clientID: "tether-probe", cleanStart: false, keepAlive: 60, username: "app", password: Array("s3cret".utf8)))])
        #expect(machine.perform(.subscribe(1, Topic("t/1"), resume: nil)).isEmpty, "held until CONNACK")
        let actions = machine.receive(Self.frame(.connack(sessionPresent: false, code: 0, properties: MQTTProperties())))
        #expect(actions.prefix(2) == [.arm(MQTT.keepAliveTimer, after: .seconds(45)), .ready])
        #expect(Self.packets(actions) == [.subscribe(1, [("t/1", .atLeastOnce)])])
    }

    @Test("CONNACK refusals: credentials stop, an unavailable broker is retried", arguments: [
        (UInt8(4), DisconnectReason.Code.credentialsRejected, RetryDisposition.doNotRetry), (5, .credentialsRejected, .doNotRetry),
        (0x86, .credentialsRejected, .doNotRetry), (0x87, .credentialsRejected, .doNotRetry), (3, .serverClosed, .retry),
        (0x88, .serverClosed, .retry), (0x89, .serverClosed, .retry), (1, .error, .doNotRetry), (2, .error, .doNotRetry), (0x84, .error, .doNotRetry),
    ] as [(UInt8, DisconnectReason.Code, RetryDisposition)])
    func connackCodes(_ row: (UInt8, DisconnectReason.Code, RetryDisposition)) {
        var machine = Self.config.makeMachine()
        expectKinds(machine.start(credentials: nil), [.send])
        let actions = machine.receive(Self.frame(.connack(sessionPresent: false, code: row.0, properties: MQTTProperties())))
        guard case .end(let ending)? = actions.last, actions.count == 1 else {
            Issue.record("not ended: \(actions)")
            return
        }
        #expect(ending.reason.code == row.1)
        #expect(ending.disposition == row.2)
        #expect(machine.perform(.ping(9)).isEmpty, "nothing after the end")
    }

    @Test("SUBACK makes a subscription; 0x80 refuses it; a bad filter or QoS never reaches the broker")
    func subscriptions() {
        var machine = Self.connected()
        #expect(Self.packets(machine.perform(.subscribe(1, .mqtt("s/+/t", qos: .atMostOnce), resume: nil))) == [.subscribe(1, [("s/+/t", .atMostOnce)])])
        #expect(machine.receive(Self.frame(.suback(1, codes: [0]))) == [.subscribed(1, .live(at: .sequence(0)))])
        expectKinds(machine.perform(.subscribe(2, Topic("denied"), resume: nil)), [.send])
        guard case .subscriptionFailed(2, let failure)? = machine.receive(Self.frame(.suback(2, codes: [0x80]))).first else {
            Issue.record("not refused")
            return
        }
        #expect(failure.code == "mqtt_0x80")
        for (topic, code) in [(Topic("a/#/b"), "invalid_filter"), (Topic("q", options: ["qos": 2]), "invalid_qos")] {
            let actions = machine.perform(.subscribe(3, topic, resume: nil))
            #expect(Self.packets(actions).isEmpty)
            guard case .subscriptionFailed(3, let failure)? = actions.first else {
                Issue.record("\(topic) accepted")
                continue
            }
            #expect(failure.code == code)
        }
    }

    @Test("a message goes to every subscription whose filter matches, and is acknowledged once the app finished it on each, in arrival order")
    func wildcardRouting() {
        var machine = Self.connected()
        Self.subscribed(&machine, 1, "a/#")
        Self.subscribed(&machine, 2, "a/+")
        Self.subscribed(&machine, 3, "b")
        let actions = machine.receive(Self.frame(Self.message("a/x", #"{"v":1}"#, id: 9)))
        #expect(actions == [
            .delivery(1, Self.data("a/x", ["v": 1]), position: .sequence(1)),
            .delivery(2, Self.data("a/x", ["v": 1]), position: .sequence(1)),
        ])
        #expect(machine.receive(Self.frame(Self.message("a/x/y", "plain text", id: nil))) == [.delivery(1, Self.data("a/x/y", "plain text"), position: .sequence(2))])
        #expect(machine.receive(Self.frame(Self.message("nobody", "x", id: 10))).isEmpty, "acknowledged in arrival order: after 9")
        #expect(machine.perform(.finished(1, through: .sequence(2))).isEmpty, "subscription 2 has not finished 9")
        #expect(machine.perform(.finished(2, through: .sequence(1))) == [
            .send(.binary(MQTTPacket.puback(9, code: 0).encoded(.v3_1_1))),
            .send(.binary(MQTTPacket.puback(10, code: 0).encoded(.v3_1_1))),
        ], "then the one nobody claims, so the broker does not re-send it forever")
        let binary = MQTTPacket.publish(MQTTPublish(topic: "b", payload: [0xFF, 0x00], qos: .atMostOnce, retain: true))
        #expect(machine.receive(Self.frame(binary)) == [.delivery(3, ["topic": "b", "payloadBase64": "/wA=", "retained": true], position: .sequence(1))])
    }

    @Test("a message that comes before its SUBACK waits for it, then follows the subscription's confirmation")
    func beforeSuback() {
        var machine = Self.connected()
        expectKinds(machine.perform(.subscribe(1, Topic("t"), resume: nil)), [.send])
        #expect(machine.receive(Self.frame(Self.message("t", "1", id: 4))).isEmpty)
        #expect(machine.receive(Self.frame(.suback(1, codes: [1]))) == [
            .subscribed(1, .live(at: .sequence(0))), .delivery(1, Self.data("t", 1), position: .sequence(1)),
        ])
        #expect(machine.perform(.finished(1, through: .sequence(1))) == [.send(.binary(MQTTPacket.puback(4, code: 0).encoded(.v3_1_1)))])
    }

    @Test("QoS 1 publish: PUBACK acknowledges it; QoS 0 is sent, not confirmed; a wildcard topic is refused")
    func publishes() {
        var machine = Self.connected()
        let sent = Self.packets(machine.perform(.publish(7, Topic("t/1"), ["n": 1], key: "k1")))
        #expect(sent == [.publish(MQTTPublish(topic: "t/1", payload: Array(#"{"n":1}"#.utf8), qos: .atLeastOnce, packetID: 1))])
        #expect(machine.receive(Self.frame(.puback(1, code: 0))) == [.replied(7, .success(.acknowledged(position: nil, payload: nil)))])
        #expect(machine.state.inFlight.isEmpty)
        guard case .replied(8, .failure(let failure))? = machine.perform(.publish(8, Topic("t/+"), 1, key: "k2")).first else {
            Issue.record("a wildcard topic published")
            return
        }
        #expect(failure.code == "invalid_topic")
        var qos0 = Self.connected(MQTT(clientID: "c", qos: .atMostOnce))
        let actions = qos0.perform(.publish(9, Topic("t"), "x", key: "k3"))
        #expect(Self.packets(actions) == [.publish(MQTTPublish(topic: "t", payload: Array(#""x""#.utf8), qos: .atMostOnce))])
        #expect(actions.last == .replied(9, .success(.sentUnconfirmed)))
    }

    @Test("MQTT 5: a PUBACK with a failure reason code (0x80 and up) rejects the publish with it; below 0x80 (0x10, no matching subscribers) is a receipt")
    func version5PubackReasons() {
        let config = MQTT(version: .v5, clientID: "c")
        for (code, refused) in [(UInt8(0x00), false), (0x10, false), (0x7F, false), (0x80, true), (0x87, true), (0x97, true)] {
            var machine = Self.connected(config)
            let request = RequestID(code) + 100
            let sent = Self.packets(machine.perform(.publish(request, Topic("t/1"), ["n": 1], key: "k")), .v5)
            guard case .publish(let publish)? = sent.first, let id = publish.packetID else {
                Issue.record("no QoS 1 PUBLISH: \(sent)")
                continue
            }
            let answer = machine.receive(Self.frame(.puback(id, code: code), version: .v5))
            if refused {
                let hex = String(code, radix: 16)
                #expect(answer == [.replied(request, .failure(WireFailure(code: "mqtt_0x\(hex)", message: "the broker refused the publish (PUBACK 0x\(hex))")))],
                        "0x\(hex)")
            } else {
                #expect(answer == [.replied(request, .success(.acknowledged(position: nil, payload: nil)))], "0x\(String(code, radix: 16))")
            }
            #expect(machine.state.inFlight.isEmpty, "answered either way: not re-sent")
        }
    }

    @Test("a stretched keep-alive is negotiated in CONNECT: ×2 asks for 120 s (PINGREQ at 90 s), ×3 still 120 s; after CONNECT it waits for the next connection; off stays off")
    func keepAliveStretched() {
        for (factor, expected) in [(2, UInt16(120)), (3, 120), (1, 60)] {
            var machine = Self.config.makeMachine()
            _ = machine.keepAliveStretched(by: factor)
            guard case .connect(let connect)? = Self.packets(machine.start(credentials: nil)).first else {
                Issue.record("no CONNECT")
                return
            }
            #expect(connect.keepAlive == expected, "×\(factor)")
            #expect(machine.keepAliveStretched(by: 1).isEmpty)
            let connack = machine.receive(Self.frame(.connack(sessionPresent: false, code: 0, properties: MQTTProperties())))
            #expect(connack.first == .arm(MQTT.keepAliveTimer, after: .seconds(Int(expected) * 3 / 4)), "the CONNECT's value stands for this connection")
        }
        var off = Self.config
        off.keepAlive = .zero
        var machine = off.makeMachine()
        _ = machine.keepAliveStretched(by: 2)
        guard case .connect(let connect)? = Self.packets(machine.start(credentials: nil)).first else {
            Issue.record("no CONNECT")
            return
        }
        #expect(connect.keepAlive == 0)
    }

    @Test("keep-alive: a PINGREQ at ¾ of it; an unanswered one ends the link (retried); the app's probe is answered by PINGRESP")
    func keepAlive() {
        var machine = Self.connected()
        let fired = machine.timerFired(MQTT.keepAliveTimer)
        #expect(Self.packets(fired) == [.pingreq])
        #expect(fired.contains(.arm(MQTT.pingTimer, after: .seconds(30))) && fired.contains(.arm(MQTT.keepAliveTimer, after: .seconds(45))))
        #expect(machine.receive(Self.frame(.pingresp)) == [.cancel(MQTT.pingTimer)])
        #expect(Self.packets(machine.perform(.ping(3))) == [.pingreq])
        #expect(machine.receive(Self.frame(.pingresp)) == [.cancel(MQTT.pingTimer), .replied(3, .success(.acknowledged(position: nil, payload: nil)))])
        expectKinds(machine.timerFired(MQTT.keepAliveTimer), [.send, .arm, .arm])
        guard case .end(let ending)? = machine.timerFired(MQTT.pingTimer).last else {
            Issue.record("the silent broker was not noticed")
            return
        }
        #expect(ending.reason.code == .networkLost && ending.disposition == .retry)
    }

    @Test("a resumed session: no resubscribe; what the broker queued is held until the backlog marker, then caught up; filters nobody claims are dropped")
    func resumedSession() {
        var first = Self.connected()
        Self.subscribed(&first, 1, "t/1")
        Self.subscribed(&first, 2, "gone")
        expectKinds(first.receive(Self.frame(Self.message("t/1", "3", id: 1))), [.delivery])
        expectKinds(first.perform(.finished(1, through: .sequence(1))), [.send])
        #expect(first.state.brokerFilters == ["t/1": .atLeastOnce, "gone": .atLeastOnce])

        var machine = Self.config.makeMachine(continuing: first.state)
        expectKinds(machine.start(credentials: nil), [.send])
        let connected = machine.receive(Self.frame(.connack(sessionPresent: true, code: 0, properties: MQTTProperties())))
        #expect(Self.packets(connected) == [.pingreq], "the backlog marker")
        #expect(connected.last == .ready)
        #expect(machine.perform(.subscribe(3, Topic("t/1"), resume: .sequence(1))).isEmpty, "no SUBSCRIBE: the broker holds it")
        #expect(machine.receive(Self.frame(Self.message("t/1", "missed-1", id: 1), Self.message("t/1", "missed-2", id: 2))).isEmpty)
        #expect(machine.receive(Self.frame(Self.message("gone", "x", id: 3))).isEmpty)
        let done = machine.receive(Self.frame(.pingresp))
        #expect(done.prefix(2) == [.cancel(MQTT.pingTimer), .subscribed(3, .caughtUp(to: .sequence(3)))])
        #expect(done.filter { if case .delivery = $0 { true } else { false } } == [
            .delivery(3, Self.data("t/1", "missed-1"), position: .sequence(2)), .delivery(3, Self.data("t/1", "missed-2"), position: .sequence(3)),
        ])
        #expect(Self.packets(done) == [.unsubscribe(3, ["gone"])], "nothing acknowledged before the app finished it")
        #expect(Self.packets(machine.perform(.finished(3, through: .sequence(2)))) == [.puback(1, code: 0)])
        #expect(Self.packets(machine.perform(.finished(3, through: .sequence(3)))) == [.puback(2, code: 0), .puback(3, code: 0)])
        #expect(machine.state.brokerFilters == ["t/1": .atLeastOnce])
    }

    @Test("the broker lost the session: a resubscribe is sent and reported as not resumable")
    func lostSession() {
        var first = Self.connected()
        Self.subscribed(&first, 1, "t")
        var machine = Self.connected(state: first.state, sessionPresent: false)
        #expect(machine.state.brokerFilters.isEmpty)
        #expect(Self.packets(machine.perform(.subscribe(2, Topic("t"), resume: .sequence(4)))).count == 1)
        let answered = machine.receive(Self.frame(.suback(2, codes: [1])))
        #expect(answered == [.subscribed(2, .resumeUnsupported)])
    }

    @Test("a QoS 1 publish never acknowledged goes out again on the next socket with DUP and its packet id")
    func resendWithDup() {
        var first = Self.connected()
        expectKinds(first.perform(.publish(1, Topic("t"), 1, key: "k")), [.send])
        var machine = Self.connected(state: first.state, sessionPresent: true)
        #expect(Self.packets(machine.perform(.publish(2, Topic("t"), 1, key: "k"))) == [.publish(MQTTPublish(topic: "t", payload: Array("1".utf8), qos: .atLeastOnce, duplicate: true, packetID: 1))])
        let other = Self.packets(machine.perform(.publish(3, Topic("t"), 2, key: "other")))
        #expect(other == [.publish(MQTTPublish(topic: "t", payload: Array("2".utf8), qos: .atLeastOnce, packetID: 2))])
        #expect(machine.receive(Self.frame(.puback(1, code: 0))) == [.replied(2, .success(.acknowledged(position: nil, payload: nil)))])
        #expect(machine.state.inFlight.map(\.key) == ["other"])
    }

    @Test("packet ids wrap from 65,535 to 1 and skip the ones still in use")
    func packetIDs() {
        var state = MQTTSessionState(clientID: "c")
        state.lastPacketID = 65_534
        state.remember("k", packetID: 1)
        #expect(state.allocatePacketID(excluding: []) == 65_535)
        #expect(state.allocatePacketID(excluding: [2]) == 3)
        var full = MQTTSessionState(clientID: "c")
        #expect(full.allocatePacketID(excluding: Set(1...UInt16.max)) == nil)
    }

    @Test("MQTT 5: session expiry and maximum packet size in CONNECT; CONNACK's assigned id and keep-alive; DISCONNECT codes")
    func version5() {
        let config = MQTT(version: .v5, clientID: "c", keepAlive: .seconds(20), maximumPacketSize: 4096)
        var machine = config.makeMachine()
        let connect = Self.packets(machine.start(credentials: nil), .v5)
        #expect(connect == [.connect(MQTTConnect(clientID: "c", cleanStart: false, keepAlive: 20, properties: MQTTProperties(sessionExpiry: 3600, maximumPacketSize: 4096)))])
        let actions = machine.receive(Self.frame(.connack(sessionPresent: false, code: 0, properties: MQTTProperties(assignedClientID: "given", serverKeepAlive: 8)), version: .v5))
        #expect(actions.first == .arm(MQTT.keepAliveTimer, after: .seconds(6)))
        #expect(machine.state.clientID == "given")
        let takenOver = machine.receive(Self.frame(.disconnect(code: 0x8E, properties: MQTTProperties()), version: .v5))
        guard case .end(let ending)? = takenOver.last else {
            Issue.record("not ended")
            return
        }
        #expect(ending.disposition == .doNotRetry, "do not fight the other client")
        #expect(MQTT.disconnectEnding(0x8B, reason: nil).disposition == .retry)
        #expect(MQTT.disconnectEnding(0x87, reason: nil).reason.code == .credentialsRejected)
        var tooBig = config.makeMachine()
        _ = tooBig.start(credentials: nil)
        let refused = tooBig.receive(.binary([0x30, 0x80, 0x40]))
        guard case .end(let tooLarge)? = refused.first else {
            Issue.record("an 8 KiB packet accepted with a 4 KiB maximum: \(refused)")
            return
        }
        #expect(tooLarge.closeCode == .protocolError)
    }

    @Test("the goodbye is a DISCONNECT (so no will message is sent); then nothing more")
    func goodbye() {
        var machine = Self.connected()
        #expect(Self.packets(machine.perform(.goodbye)) == [.disconnect(code: 0, properties: MQTTProperties())])
        #expect(machine.receive(Self.frame(.pingresp)).isEmpty)
        #expect(machine.timerFired(MQTT.keepAliveTimer).isEmpty)
    }

    @Test("a text frame, bytes that are not MQTT, a client's packet from the broker: a protocol error, retried")
    func brokenBroker() {
        for frame in [TransportFrame.text("hello"), .binary([0xF0, 0x00]), Self.frame(.subscribe(1, [("t", .atMostOnce)])), Self.frame(.connack(sessionPresent: false, code: 0, properties: MQTTProperties()))] {
            var machine = Self.connected()
            guard case .end(let ending)? = machine.receive(frame).last else {
                Issue.record("\(frame) accepted")
                continue
            }
            #expect(ending.closeCode == .protocolError && ending.disposition == .retry)
        }
    }

    @Test("without a client id each session makes one and keeps it across its sockets; settings problems are named")
    func clientIDs() {
        let machine = MQTT().makeMachine()
        #expect(machine.state.clientID.hasPrefix("tether-") && machine.state.clientID.count == 23)
        #expect(MQTT().makeMachine(continuing: machine.state).state.clientID == machine.state.clientID)
        #expect(MQTT().makeMachine().state.clientID != machine.state.clientID)
        #expect(MQTT(clientID: "").settingsProblem != nil)
        #expect(MQTT(keepAlive: .seconds(70_000)).settingsProblem != nil)
        #expect(MQTT(maximumPacketSize: 10).settingsProblem != nil)
        #expect(MQTT().settingsProblem == nil)
    }
}

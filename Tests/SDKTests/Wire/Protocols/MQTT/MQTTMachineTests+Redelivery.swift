import ConnectionPolicy
import Foundation
@testable import SDK
import Testing

/// Inbound QoS 1 messages sent again by the broker (DUP): one already delivered is acknowledged
/// again, not delivered twice; one this socket never delivered comes flagged as a redelivery.
extension MQTTMachineTests {
    @Test("a re-sent message (DUP) already acknowledged is acknowledged again, not delivered twice — also on the next socket")
    func inboundDuplicates() {
        var machine = Self.connected()
        Self.subscribed(&machine, 1, "t")
        #expect(machine.receive(Self.frame(Self.message("t", "1", id: 5))).count == 1)
        let puback5 = WireAction.send(.binary(MQTTPacket.puback(5, code: 0).encoded(.v3_1_1)))
        #expect(machine.perform(.finished(1, through: .sequence(1))) == [puback5])
        #expect(machine.receive(Self.frame(Self.message("t", "1", id: 5, duplicate: true))) == [puback5])
        var next = Self.connected(state: machine.state, sessionPresent: true)
        #expect(next.perform(.subscribe(2, Topic("t"), resume: .sequence(1))).isEmpty)
        expectKinds(next.receive(Self.frame(.pingresp)), [.cancel, .subscribed])
        #expect(next.receive(Self.frame(Self.message("t", "1", id: 5, duplicate: true))) == [puback5], "the PUBACK was lost with the socket")
        #expect(next.receive(Self.frame(Self.message("t", "2", id: 5))).first == .delivery(2, Self.data("t", 2), position: .sequence(2)), "a new message reusing the id")
    }

    @Test("a re-sent message (DUP) this machine never delivered comes flagged as a redelivery: the app may have been handed it before a kill")
    func inboundRedelivery() {
        var machine = Self.connected()
        Self.subscribed(&machine, 1, "t")
        #expect(machine.receive(Self.frame(Self.message("t", "1", id: 5, duplicate: true))) == [.redelivery(1, Self.data("t", 1), position: .sequence(1))])
        #expect(machine.receive(Self.frame(Self.message("t", "2", id: 6))) == [.delivery(1, Self.data("t", 2), position: .sequence(2))])
    }
}

/// Delivered is not acknowledged: the PUBACK waits for the app, and only what was acknowledged
/// outlives the process.
extension MQTTMachineTests {
    static let puback5 = WireAction.send(.binary(MQTTPacket.puback(5, code: 0).encoded(.v3_1_1)))

    /// A machine that delivered message 5 ("1" on `t`, position 1) to subscription 1, which the
    /// app has not finished.
    static func deliveredUnfinished() -> MQTT.Machine {
        var machine = connected()
        subscribed(&machine, 1, "t")
        #expect(machine.receive(frame(message("t", "1", id: 5))) == [.delivery(1, data("t", 1), position: .sequence(1))])
        #expect(machine.state.acknowledged[5] == nil, "delivered, not acknowledged")
        return machine
    }

    @Test("in the process, the next socket does not deliver again a re-send of what the last one delivered, and acknowledges it once the app has finished it")
    func redeliveryOfUnfinishedInProcess() throws {
        let machine = Self.deliveredUnfinished()
        let handed = try #require(try machine.sessionState?.decoded(as: MQTTSessionState.self))
        var next = Self.connected(state: handed, sessionPresent: true)
        #expect(next.perform(.subscribe(2, Topic("t"), resume: .sequence(1))).isEmpty)
        #expect(next.receive(Self.frame(Self.message("t", "1", id: 5, duplicate: true))).isEmpty, "held for the backlog; never delivered twice")
        expectKinds(next.receive(Self.frame(.pingresp)), [.cancel, .subscribed])
        #expect(next.receive(Self.frame(Self.message("t", "2", id: 6))) == [.delivery(2, Self.data("t", 2), position: .sequence(2))])
        #expect(next.perform(.finished(2, through: .sequence(1))) == [Self.puback5], "finished: acknowledged now, in arrival order")
        #expect(next.state.acknowledged[5] != nil && next.state.delivered[5] == nil)
    }

    @Test("a relaunch (the durable state) delivers a re-send of what was delivered and never finished again, flagged: the app may not have finished it")
    func redeliveryOfUnfinishedAfterRelaunch() throws {
        let machine = Self.deliveredUnfinished()
        let stored = try #require(try machine.durableSessionState?.decoded(as: MQTTSessionState.self))
        #expect(stored.delivered.isEmpty && stored.acknowledged.isEmpty)
        var next = Self.connected(state: stored, sessionPresent: true)
        #expect(next.perform(.subscribe(2, Topic("t"), resume: .sequence(0))).isEmpty)
        #expect(next.receive(Self.frame(Self.message("t", "1", id: 5, duplicate: true))).isEmpty, "held for the backlog")
        #expect(next.receive(Self.frame(.pingresp)).contains(.redelivery(2, Self.data("t", 1), position: .sequence(1))))
        #expect(next.perform(.finished(2, through: .sequence(1))) == [Self.puback5])
    }

    @Test("what was acknowledged outlives the process: after a relaunch its re-send (the PUBACK lost) is acknowledged again, not delivered")
    func acknowledgedOutlivesTheProcess() throws {
        var machine = Self.deliveredUnfinished()
        #expect(machine.perform(.finished(1, through: .sequence(1))) == [Self.puback5])
        let stored = try #require(try machine.durableSessionState?.decoded(as: MQTTSessionState.self))
        var next = Self.connected(state: stored, sessionPresent: true)
        #expect(next.perform(.subscribe(2, Topic("t"), resume: .sequence(1))).isEmpty)
        #expect(next.receive(Self.frame(Self.message("t", "1", id: 5, duplicate: true))) == [Self.puback5])
    }

    @Test("a state stored before delivered digests were kept apart (no `delivered` key) still reads")
    func storedWithoutDelivered() throws {
        let text = #"{"clientID":"c","brokerFilters":{"t":1},"inFlight":[],"acknowledged":[5,42],"lastPacketID":7}"#
        let state = try JSONDecoder().decode(MQTTSessionState.self, from: Data(text.utf8))
        #expect(state.acknowledged == [5: 42] && state.delivered.isEmpty && state.lastPacketID == 7 && state.brokerFilters == ["t": .atLeastOnce])
    }
}

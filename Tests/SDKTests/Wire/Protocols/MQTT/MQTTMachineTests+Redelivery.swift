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

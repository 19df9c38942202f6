import ConnectionPolicy
@testable import SDK
import Testing

/// Letting a subscription go: before its SUBACK, and while another of the session's holds the
/// same filter on the broker.
extension MQTTMachineTests {
    @Test("a subscription let go before its SUBACK: UNSUBSCRIBE goes, the late SUBACK makes nothing, a message on it meanwhile is acknowledged at once")
    func unsubscribeWhilePending() {
        var machine = Self.connected()
        expectKinds(machine.perform(.subscribe(1, Topic("t"), resume: nil)), [.send])
        #expect(Self.packets(machine.perform(.unsubscribe(1))) == [.unsubscribe(2, ["t"])])
        #expect(machine.receive(Self.frame(.suback(1, codes: [1]))).isEmpty, "no subscription left to report")
        #expect(Self.packets(machine.receive(Self.frame(Self.message("t", "1", id: 7)))) == [.puback(7, code: 0)], "nobody will finish it")
    }

    @Test("two subscriptions on one filter (one sent again after the first was given up on): the broker's subscription ends only with the last of them")
    func unsubscribeSharedFilter() {
        var machine = Self.connected()
        Self.subscribed(&machine, 1, "t")
        Self.subscribed(&machine, 2, "t")
        #expect(Self.packets(machine.perform(.unsubscribe(1))).isEmpty, "subscription 2 still holds the broker's")
        #expect(machine.receive(Self.frame(Self.message("t", "1", id: 7))) == [.delivery(2, Self.data("t", 1), position: .sequence(1))])
        #expect(Self.packets(machine.perform(.unsubscribe(2))) == [.puback(7, code: 0), .unsubscribe(3, ["t"])], "let go unfinished: acknowledged, then the filter ended")
    }
}

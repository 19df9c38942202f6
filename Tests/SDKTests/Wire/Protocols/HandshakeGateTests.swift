@testable import SDK
import Testing

/// The handshake gate every protocol machine goes through, table by table.
@Suite("Handshake gate")
struct HandshakeGateTests {
    enum Step: Hashable, Sendable { case opened, authenticating }

    @Test("handshaking: commands are held in order and released once, when it opens; a goodbye before then is dropped")
    func holdsThenReleases() {
        var gate = HandshakeGate(Step.opened)
        #expect(gate.step == .opened)
        let first = gate.admits(.subscribe(1, Topic("a"), resume: nil))
        #expect(!first)
        gate.advance(to: .authenticating)
        #expect(gate.step == .authenticating)
        let second = gate.admits(.ping(2))
        let early = gate.admits(.goodbye)
        #expect(!second && !early)
        let released = gate.open()
        #expect(released == [.subscribe(1, Topic("a"), resume: nil), .ping(2)])
        #expect(gate.isReady && gate.step == nil)
        let again = gate.open()
        #expect(again == [], "released once")
        let ping = gate.admits(.ping(3))
        #expect(ping, "ready: carried out at once")
        let goodbye = gate.admits(.goodbye)
        #expect(goodbye)
    }

    @Test("a command the protocol takes behind its handshake passes; ended, nothing is admitted, held or released")
    func passesAndEnds() {
        var gate = HandshakeGate(Step.authenticating)
        let passing = gate.admits(.ping(1), passes: true)
        let held = gate.admits(.ping(2))
        #expect(passing && !held)
        gate.end()
        #expect(gate.isEnded)
        let afterEnd = gate.admits(.ping(3))
        let passingAfterEnd = gate.admits(.ping(4), passes: true)
        #expect(!afterEnd && !passingAfterEnd)
        let released = gate.open()
        #expect(released == [], "what was held is dropped with the connection")
        gate.advance(to: .opened)
        #expect(gate.isEnded, "an ended gate stays ended")
    }
}

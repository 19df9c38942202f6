@testable import SDK
import Testing

/// The delivery core's turn, table by table (`DeliveryCore.swift`): the calls the session's
/// `deliver` and flush make, and the ones `bench-instructions session` counts.
@Suite("TurnDeliveries: a turn's runs held, then taken for the subscribers")
struct TurnDeliveriesTests {
    private func run(_ channel: String, _ sequences: UInt64...) -> [ChannelMessage] {
        messages(channel, sequences)
    }

    private func messages(_ channel: String, _ sequences: [UInt64]) -> [ChannelMessage] {
        sequences.map { ChannelMessage(channel: channel, sequence: $0, data: .init(Int($0))) }
    }

    /// A turn that held each run (channel, sequences, bytes), in order, in channels made for them.
    private func holding(_ runs: (channel: String, sequences: [UInt64], bytes: Int)...) -> ([String: Session.ChannelState], Session.TurnDeliveries) {
        var states: [String: Session.ChannelState] = [:]
        for run in runs { states[run.channel] = .empty }
        var turn = Session.TurnDeliveries()
        for run in runs { _ = turn.hold(messages(run.channel, run.sequences), bytes: run.bytes, on: run.channel, in: &states) }
        return (states, turn)
    }

    @Test("a run of a channel the session does not have is refused; a channel is listed once, in the order its first run came")
    func holding() {
        var states = ["a": Session.ChannelState.empty, "b": .empty]
        var turn = Session.TurnDeliveries()
        #expect(!turn.hold(run("gone", 1), bytes: 5, on: "gone", in: &states))
        #expect(turn.hold(run("b", 1), bytes: 5, on: "b", in: &states))
        #expect(turn.hold(run("a", 1), bytes: 5, on: "a", in: &states))
        #expect(turn.hold(run("b", 2, 3), bytes: 10, on: "b", in: &states))
        #expect(turn.channels == ["b", "a"])
        #expect(states["b"]?.undelivered.map(\.sequence) == [1, 2, 3] && states["b"]?.undeliveredBytes == 15)
        #expect(states["gone"] == nil, "not made by a run")
    }

    @Test("the turn's end, no store: each channel's messages taken whole and counted, in order; positions for the mirror; the turn emptied")
    func takenWithoutStore() {
        var (states, turn) = holding(("b", [4, 5], 10), ("a", [7], 5))
        let taken = turn.takeWithoutStore(from: &states)
        #expect(taken.batches.map(\.channel) == ["b", "a"])
        #expect(taken.batches.map { $0.messages.map(\.sequence) } == [[4, 5], [7]])
        #expect(taken.batches.map(\.bytes) == [10, 5])
        #expect(taken.batches.map(\.last) == [.sequence(5), .sequence(7)])
        #expect(taken.positions.map(\.channel) == ["b", "a"] && taken.positions.map(\.position) == [.sequence(5), .sequence(7)])
        #expect(taken.controlled.isEmpty)
        #expect(states["b"]?.undelivered.isEmpty == true && states["b"]?.handedOver == 2 && states["b"]?.handedThrough == .sequence(5))
        #expect(turn.channels.isEmpty, "the next turn starts empty")
    }

    @Test("a held-back channel keeps its messages for flow control (how many it holds); a channel let go meanwhile is skipped, even by the mirror")
    func heldBackAndGone() {
        var (states, turn) = holding(("slow", [1, 2], 10), ("left", [1], 5))
        states["slow"]?.flowControlled = true
        states["left"] = nil
        let taken = turn.takeWithoutStore(from: &states)
        #expect(taken.batches.isEmpty)
        #expect(taken.controlled.map(\.channel) == ["slow"] && taken.controlled.map(\.held) == [2])
        #expect(states["slow"]?.undelivered.count == 2, "still held: flow control hands them over")
        #expect(taken.positions.map(\.channel) == ["slow"])
    }
}

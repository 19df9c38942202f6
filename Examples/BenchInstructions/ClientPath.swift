import Foundation
import SDK

// The client's per-message paths, each in a function of its own that is never inlined:
// `.ci/instructions` counts only what runs inside them (callgrind's `--toggle-collect`), so the
// frames they are given, written beforehand, are not counted.

/// Reads of 1,000 message frames for "room" (the last read shorter), as the server writes them,
/// numbered from 1: each is new to the machine (one it already had would be dropped as a
/// duplicate, a path of its own).
func messageReads(_ count: Int, codec: JSONWireCodec, data: JSONValue) throws -> [[TransportFrame]] {
    try stride(from: 0, to: count, by: 1_000).map { start in
        try (start..<min(start + 1_000, count)).map { index in
            try codec.encode(ServerMessage.message(ChannelMessage(channel: "room", sequence: UInt64(index + 1), data: data)))
        }
    }
}

/// `JSONWireCodec` decodes `frames` (what any client that decodes pays): the sum of the
/// messages' positions.
@inline(never)
func measuredDecode(_ codec: JSONWireCodec, _ frames: [TransportFrame]) throws -> UInt64 {
    var sum: UInt64 = 0
    for frame in frames {
        if case .message(let message) = try codec.decode(frame) { sum &+= message.sequence ?? 0 }
    }
    return sum
}

/// `JSONWireCodec` decodes a read's `frames` and keeps the messages until the read ends; then
/// each is read and they are let go, in order: what any client that hands a read's messages over
/// together pays beyond `measuredDecode` (the allocator serves a read of live messages, not one
/// message freed before the next is made). The sum of the positions.
@inline(never)
func measuredHeld(_ codec: JSONWireCodec, _ frames: [TransportFrame]) throws -> UInt64 {
    var messages: [ChannelMessage] = []
    for frame in frames {
        if case .message(let message) = try codec.decode(frame) { messages.append(consume message) }
    }
    var sum: UInt64 = 0
    for index in messages.indices { sum &+= messages[index].sequence ?? 0 }
    messages = []
    return sum
}

/// Tether's protocol machine takes `frames` one at a time: the sum of the delivered positions.
@inline(never)
func measuredMachine(_ machine: inout TetherProtocol.Machine, _ frames: [TransportFrame]) -> UInt64 {
    var sum: UInt64 = 0
    for frame in frames {
        if case .delivery(_, _, let position?)? = machine.receive(frame).first { sum &+= position.sequence ?? 0 }
    }
    return sum
}

/// The machine takes `frames` as one read (`receive(contentsOf:)`, as the session hands a read
/// over): the sum of the delivered positions.
@inline(never)
func measuredRead(_ machine: inout TetherProtocol.Machine, _ frames: [TransportFrame]) -> UInt64 {
    var sum: UInt64 = 0
    for case .deliveries(_, let messages, _) in machine.receive(contentsOf: frames) {
        for message in messages { sum &+= message.sequence ?? 0 }
    }
    return sum
}

/// The session's path for one read, without its actor hops: the machine takes the read; each
/// run of a subscription's messages finds its channel in the socket's table and is held in the
/// channel's state (`TurnDeliveries.hold`, as the session's `deliver` calls it); the turn's end
/// takes the held messages, counted (`takeWithoutStore`, as the session's flush calls it), and
/// offers each batch to the channel's subscribers (`ChannelState.offer`); the subscription's
/// iterator takes the batch and reads each message (`received`, `Reading.next`). The session's
/// own calls, in its order; what it does beside them per read (the mirror's one update, the
/// protocol's acknowledgement of what was finished, which Tether's does not need) is left out.
/// The sum of the positions the app got.
@inline(never)
func measuredSession(
    _ machine: inout TetherProtocol.Machine, _ socket: Session.SocketChannels, _ channels: inout [String: Session.ChannelState],
    _ backlog: Locked<Subscriber.Backlog>, _ frames: [TransportFrame]
) -> UInt64 {
    var turn = Session.TurnDeliveries()
    for case .deliveries(let subscription, let messages, let bytes) in machine.receive(contentsOf: frames) {
        guard let channel = socket.channel(of: subscription) else { continue }
        _ = turn.hold(messages, bytes: bytes, on: channel, in: &channels)
    }
    // The batches the subscribers were handed, as their streams hold them once the turn is over
    // (the session's flush keeps no copy: an iterator reads its batch as its own).
    var handed: [(messages: [ChannelMessage], bytes: Int)] = []
    do {
        let taken = turn.takeWithoutStore(from: &channels)
        for batch in taken.batches {
            let refused = Session.ChannelState.offer(batch.messages, bytes: batch.bytes, to: batch.subscribers, limit: 10_000, byteLimit: .max)
            guard refused.isEmpty else { fatalError("the subscriber refused a batch") }
            handed.append((batch.messages, batch.bytes))
        }
    }
    var sum: UInt64 = 0
    while !handed.isEmpty {
        // What the subscription's iterator does with the batch it takes from the stream (no
        // store: the batch is read as the iterator's own, `Subscription.Reading`).
        let (messages, bytes) = handed.removeFirst()
        _ = backlog.withLock { $0.received(Subscriber.Batch(messages: messages, bytes: bytes)) }
        let reading = Subscription.Reading(consume messages, backlog: backlog)
        // The app's read of each message is the one `measuredDecode` and `measuredHeld` make
        // (`sequence`): reading `position?.sequence` instead copied the position out (~200
        // instructions) — the consumer's cost, counted here only, not the session's.
        while let message = reading.next() { sum &+= message.sequence ?? 0 }
    }
    return sum
}

/// A kept set of `count` channels (base 40), each resumed from 40 with one message missed: the
/// last socket's state, what the session resumes, the server's `resume_set` answering the set,
/// and the catch-up messages, as the reference server writes them (not counted).
func keptSetRecovery(_ count: Int, codec: JSONWireCodec) throws -> (WireSessionState, [WireResume], TransportFrame, [TransportFrame]) {
    let members = TetherResumeSet.canonical((0..<count).map { TetherResumeSet.Member(channel: "channel-\($0)", base: 40) })
    let state = WireSessionState(TetherSessionState(token: "T1", members: members))
    let resuming = (0..<count).map { WireResume(topic: Topic("channel-\($0)"), position: .sequence(40)) }
    var answers = TetherResumeSet.Answers()
    for _ in members { answers.append(latest: 41, from: 40, gap: false) }
    let answer = try codec.encode(ServerMessage.resumeSet(token: "T2", resumed: true, answers: answers))
    let catchUp = try members.map { try codec.encode(ServerMessage.message(ChannelMessage(channel: $0.channel, sequence: 41, data: payload))) }
    return (state, resuming, answer, catchUp)
}

/// The protocol's part of a reconnect's recovery of a kept set: the handshake names the set
/// (built from the last socket's state), the new socket's machine starts, each subscription is
/// claimed as the session's replay claims it, the `resume_set` answers the set, and one catch-up
/// message each is taken (its decode included). The session's own part (the replay's steps, the
/// report) is not in it: it runs on the actor. The number of subscriptions answered plus the sum
/// of the delivered positions.
@inline(never)
func measuredResume(_ state: WireSessionState, _ resuming: [WireResume], _ answer: TransportFrame, _ catchUp: [TransportFrame]) -> UInt64 {
    let tether = TetherProtocol()
    let handshake = tether.handshake(endpoint: resumeEndpoint, credentials: nil, resuming: resuming, continuing: state)
    var machine = tether.makeConnectionMachine(continuing: state, handshake: handshake, subprotocol: TetherResumeSet.subprotocol)
    _ = machine.start(credentials: nil)
    for (index, resume) in resuming.enumerated() { _ = machine.perform(.subscribe(SubscriptionID(index + 1), resume.topic, resume: resume.position)) }
    var sum: UInt64 = 0
    for case .subscribed in machine.receive(answer) { sum += 1 }
    for case .deliveries(_, let messages, _) in machine.receive(contentsOf: catchUp) {
        for message in messages { sum &+= message.sequence ?? 0 }
    }
    return sum
}

let resumeEndpoint = URL(string: "ws://127.0.0.1:9/")!

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
    for case .delivery(_, _, let position?) in machine.receive(contentsOf: frames) { sum &+= position.sequence ?? 0 }
    return sum
}

/// The session's path for one read, without its actor hops: the machine takes the read, each
/// run of a subscription's deliveries is held in the channel (`hold`), the turn's messages are
/// handed over as one batch (`takeHeld`, `count`, `offer`), and the subscription's iterator
/// takes the batch and each message (`received`, `take`). The sum of the positions the app got.
@inline(never)
func measuredSession(
    _ machine: inout TetherProtocol.Machine, _ channel: inout Session.ChannelState, _ backlog: Locked<Subscriber.Backlog>, _ frames: [TransportFrame]
) -> UInt64 {
    let actions = machine.receive(contentsOf: frames)
    var index = actions.startIndex
    while index < actions.endIndex {
        guard case .delivery(let subscription, _, _) = actions[index] else {
            index += 1
            continue
        }
        _ = channel.hold(actions.deliveryRun(of: subscription, on: "room", from: &index))
    }
    let batch = channel.takeHeld(.max)
    _ = channel.count(batch)
    let bytes = batch.approximateByteCount
    guard channel.offer(batch, bytes: bytes, limit: 10_000, byteLimit: .max).isEmpty else { fatalError("the subscriber refused a batch") }
    // What the subscription's iterator does with the batch it takes from the stream.
    _ = backlog.withLock { $0.received(Subscriber.Batch(messages: batch, bytes: bytes)) }
    var sum: UInt64 = 0
    while case (let message?, _) = backlog.withLock({ $0.take() }) { sum &+= message.position?.sequence ?? 0 }
    return sum
}

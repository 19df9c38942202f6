import Foundation
import SDK
import SDKTesting

// bench-instructions SCENARIO COUNT: one per-message path, COUNT times, for valgrind's
// callgrind, which counts the same instructions on a busy machine as on an idle one. Two
// counts' difference divided by the difference in COUNT is the cost of one message (start-up
// cancels out): see BENCHMARKS.md. The client's paths run in functions of their own
// (`ClientPath.swift`), so the frames they take, written beforehand, can be left out of the count
// (`--toggle-collect`, as `.ci/instructions` does). No Swift concurrency here: valgrind cannot run
// a program that starts its thread pool on this machine.
//
//   decode   JSONWireCodec decodes a message frame (what any client that decodes pays)
//   held     the same, the messages of a read of 1,000 kept until the read ends, then read and let
//            go (what any client that hands a read's messages over together pays)
//   machine  Tether's protocol machine takes the frame: decode, route to the subscription, the
//            delivery action the session carries out
//   read     the same, the frames handed over as reads of 1,000 (`receive(contentsOf:)`, as
//            the session hands a read's frames over)
//   session  the session's per-message path without its actor hops (which callgrind cannot
//            run): `read`, then each run of a subscription's deliveries held in the channel,
//            handed over as one batch to a subscriber (`offer`), and its iterator taking each
//            message (`received`, `take`) — the code the session runs, called as it calls it
//   server   ServerCore numbers, encodes and fans out a message to one subscriber
//   subscribe ServerCore takes a client's `subscribe` with `since` (decode, the `ok`, the two
//            messages missed), cycling over 100 channels
//   replay   a pipelined replay of COUNT subscriptions, as the session's synchronous parts run
//            it: the replay plan of COUNT steps started, each subscribe through the protocol
//            machine, each `ok` taken by the machine and the step marked done in the plan
//   resume   the protocol's part of a reconnect's recovery of a kept set of COUNT / 5
//            subscriptions, one message missed each (`measuredResume`): the handshake from the
//            kept set, the machine, the claims, the set's one-frame answer, the catch-up messages

let payload: JSONValue = ["text": "the quick brown fox jumps over the lazy dog", "from": "ada", "n": 42]
let arguments = CommandLine.arguments.dropFirst()
guard let scenario = arguments.first, let count = arguments.dropFirst().first.flatMap(Int.init) else {
    print("usage: bench-instructions decode|held|machine|read|session|server|subscribe|replay|resume COUNT")
    exit(2)
}

let codec = JSONWireCodec()
var checksum: UInt64 = 0

/// A Tether machine past `auth`, subscribed to "room" (subscription 7).
func subscribedMachine() throws -> TetherProtocol.Machine {
    var machine = TetherProtocol(handshake: .pipelined).makeMachine()
    _ = machine.start(credentials: nil)
    _ = machine.receive(try codec.encode(ServerMessage.ack(Ack(id: 1))))
    _ = machine.perform(.subscribe(7, Topic("room"), resume: nil))
    _ = machine.receive(try codec.encode(ServerMessage.ack(Ack(id: 2, sequence: 0))))
    return machine
}

switch scenario {
case "decode":
    for read in try messageReads(count, codec: codec, data: payload) { checksum &+= try measuredDecode(codec, read) }
case "held":
    for read in try messageReads(count, codec: codec, data: payload) { checksum &+= try measuredHeld(codec, read) }
case "machine":
    var machine = try subscribedMachine()
    for read in try messageReads(count, codec: codec, data: payload) { checksum &+= measuredMachine(&machine, read) }
case "read":
    var machine = try subscribedMachine()
    for read in try messageReads(count, codec: codec, data: payload) { checksum &+= measuredRead(&machine, read) }
case "session":
    var machine = try subscribedMachine()
    // The stream keeps nothing (the iterator, here `measuredSession`, takes each batch): as an
    // app's iterator that keeps up, it holds no batch after the read.
    let (_, continuation) = AsyncThrowingStream<Subscriber.Batch, any Error>.makeStream(bufferingPolicy: .bufferingNewest(0))
    let backlog = Locked(Subscriber.Backlog())
    var channel = Session.ChannelState.empty
    channel.add(Subscriber(continuation: continuation, backlog: backlog), id: 1)
    var channels = ["room": channel]
    // The machine's subscription 7 is "room" on this socket (`subscribedMachine`).
    var socket = Session.SocketChannels()
    socket.confirm(7, for: "room")
    for read in try messageReads(count, codec: codec, data: payload) { checksum &+= measuredSession(&machine, socket, &channels, backlog, read) }
case "server":
    var core = ServerCore()
    core.connectionOpened(1)
    _ = core.received(try codec.encode(ClientMessage.authenticate(id: 1, token: nil)), from: 1)
    _ = core.received(try codec.encode(ClientMessage.subscribe(id: 2, channel: "room", since: nil)), from: 1)
    for _ in 0..<count { checksum &+= UInt64(try core.publish(payload, to: "room").1.count) }
case "subscribe":
    var core = ServerCore()
    for index in 0..<100 {
        _ = try core.publish(payload, to: "room-\(index)")
        _ = try core.publish(payload, to: "room-\(index)")
    }
    core.connectionOpened(1)
    _ = core.received(try codec.encode(ClientMessage.authenticate(id: 1, token: nil)), from: 1)
    let frames = try (0..<100).map { try codec.encode(ClientMessage.subscribe(id: RequestID($0 + 2), channel: "room-\($0)", since: 1)) }
    for index in 0..<count { checksum &+= UInt64(core.received(frames[index % frames.count], from: 1).count) }
case "replay":
    let channels = (0..<count).map { "room-\($0)" }
    let steps = channels.map { ReplayPlan.Step(id: .subscription($0), prerequisites: [.authenticated]) }
    var machine = TetherProtocol(handshake: .pipelined).makeMachine()
    _ = machine.start(credentials: nil)
    _ = machine.receive(try codec.encode(ServerMessage.ack(Ack(id: 1))))
    var plan = ReplayPlan(steps: steps, mode: .pipelined, attemptLimit: 3)
    var requests: [(id: RequestID, channel: String)] = []
    for action in plan.start() {
        guard case .perform(let id, _) = action else { continue }
        let request = (id: RequestID(requests.count + 2), channel: String(id.rawValue.dropFirst("subscribe:".count)))
        requests.append(request)
        checksum &+= UInt64(machine.perform(.subscribe(request.id, Topic(request.channel), resume: .sequence(41))).count)
    }
    for request in requests {
        // The server's `ok`, written as the reference server writes it (its encoding not counted).
        _ = machine.receive(.text(#"{"id":\#(request.id),"seq":42,"type":"ok"}"#))
        checksum &+= UInt64(plan.succeeded(.subscription(request.channel)).count)
    }
case "resume":
    // COUNT / 5 subscriptions: .ci/instructions counts 1,000 and 11,000, so 200 and 2,200 (a set
    // of 11,000 would not fit its header); per subscription = the difference ÷ 2,000.
    let (state, resuming, answer, catchUp) = try keptSetRecovery(count / 5, codec: codec)
    checksum &+= measuredResume(state, resuming, answer, catchUp)
default:
    print("unknown scenario \(scenario): decode, held, machine, read, session, server, subscribe or replay")
    exit(2)
}
print("bench-instructions: \(scenario) x\(count) checksum=\(checksum)")

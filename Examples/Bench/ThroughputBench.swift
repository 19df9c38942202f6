import Foundation
import NIOTransport
import SDK

/// `bench throughput`: inbound messages delivered to an app consumer through `Session`, against
/// a bare NIO WebSocket client that decodes each frame with the same codec, on the same server,
/// the same payloads, in the same run. The server runs in a process of its own, so this
/// process's CPU time (user + system, `getrusage`) is the client's alone: the figure that holds
/// on a busy machine is CPU time per message; the rates are shown beside it. `--busy` runs a
/// CPU-bound process (`bench spin`) beside the rounds. A third client, the raw one handing each
/// read's decoded messages to a consumer task of its own, shows what any `AsyncSequence` of
/// messages costs before a session does anything (the session is compared with it too). A fourth
/// hands each decoded message to a consumer task through an `AsyncStream` of its own, one yield a
/// message: what an app writes by hand around a raw client. Every consumer reads each message's
/// `data` (it sums `data["n"]`), so no client's payload goes unread. The ratios are medians of the
/// rounds' paired ratios (each round runs the four clients in turn).
struct ThroughputBench {
    let messages: Int
    let rounds: Int
    let busy: Bool
    /// "session", "raw", "handoff" or "perstream": one side alone (to profile it), no ratio.
    var only: String? = nil
    /// `--paced K`: the server sends in groups of 1 … K messages, a little apart (a chat's
    /// rate: a read holds a few frames, and its wake-ups are most of its cost).
    var paced: Int? = nil
    static let payload: JSONValue = ["text": "the quick brown fox jumps over the lazy dog", "from": "ada", "n": 42]

    /// One round of one client: wall time and CPU time for `messages` messages.
    struct Round {
        let seconds: Double
        let cpuSeconds: Double
    }

    func run() async throws {
        var spinner: Process?
        if busy {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            process.arguments = ["spin"]
            try process.run()
            spinner = process
            print("  beside a CPU-bound process (bench spin, pid \(process.processIdentifier))")
        }
        defer {
            if let spinner { kill(spinner.processIdentifier, SIGKILL) }
        }
        // Every message retained: a subscriber held back at its bound is caught up from the server.
        try await BenchServerSet.withServer(rtt: .zero, retention: messages) { server, port in
            var session: [Round] = []
            var raw: [Round] = []
            var handOff: [Round] = []
            var perStream: [Round] = []
            var wakeUps: [Double] = []
            var framesPerRead: [Double] = []
            func measure(_ side: String, _ round: Int) async throws {
                switch side {
                case "session":
                    let (measured, wakeUpsPerRead, frames) = try await measureSession(port: port, server: server, channel: "s\(round)")
                    session.append(measured)
                    wakeUps.append(wakeUpsPerRead)
                    framesPerRead.append(frames)
                case "raw": raw.append(try await measureRaw(port: port, server: server, channel: "r\(round)", consumer: .none))
                case "perstream": perStream.append(try await measureRaw(port: port, server: server, channel: "p\(round)", consumer: .perMessage))
                default: handOff.append(try await measureRaw(port: port, server: server, channel: "h\(round)", consumer: .perRead))
                }
            }
            if let only {
                for round in 0..<rounds { try await measure(only, round) }
                let side = only == "session" ? session : only == "raw" ? raw : only == "perstream" ? perStream : handOff
                let cpu = side.map { $0.cpuSeconds / Double(messages) * 1e6 }.sorted()
                let rates = side.map { Double(messages) / $0.seconds }.sorted()
                print("  \(only) alone: median \(median(rates).formatted(0)) msgs/s, CPU median \(median(cpu).formatted(2)) µs/msg (min \(cpu[0].formatted(2)), max \(cpu[cpu.count - 1].formatted(2)))")
                return
            }
            let sides = ["session", "raw", "handoff", "perstream"]
            for round in 0..<rounds {
                // Rotate the order, so no side always runs on a warmer machine.
                for offset in 0..<sides.count { try await measure(sides[(round + offset) % sides.count], round) }
            }
            let n = Double(messages)
            func rates(_ rounds: [Round]) -> [Double] { rounds.map { n / $0.seconds }.sorted() }
            func cpu(_ rounds: [Round]) -> [Double] { rounds.map { $0.cpuSeconds / n * 1e6 }.sorted() }
            func spread(_ values: [Double], _ decimals: Int) -> String {
                "median \(median(values).formatted(decimals)) (min \(values[0].formatted(decimals)), max \(values[values.count - 1].formatted(decimals)))"
            }
            print("  session: \(spread(rates(session), 0)) msgs/s, CPU \(spread(cpu(session), 2)) µs/msg")
            print("  raw+decode: \(spread(rates(raw), 0)) msgs/s, CPU \(spread(cpu(raw), 2)) µs/msg")
            print("  raw+decode+hand-off: \(spread(rates(handOff), 0)) msgs/s, CPU \(spread(cpu(handOff), 2)) µs/msg")
            print("  raw+decode+a stream per message: \(spread(rates(perStream), 0)) msgs/s, CPU \(spread(cpu(perStream), 2)) µs/msg")
            // Paired: each round's ratio (the clients of a round ran one after the other), then the
            // median and the spread of those ratios.
            func paired(_ top: [Round], _ bottom: [Round], _ value: (Round) -> Double) -> String {
                let ratios = zip(top, bottom).map { value($0) / value($1) }.sorted()
                return "\(median(ratios).formatted(3))(\(ratios[0].formatted(3))…\(ratios[ratios.count - 1].formatted(3)))"
            }
            let cpuOf: (Round) -> Double = { $0.cpuSeconds }
            let rateOf: (Round) -> Double = { 1 / $0.seconds }
            print("throughput: session_cpu_us=\(median(cpu(session)).formatted(2)) raw_cpu_us=\(median(cpu(raw)).formatted(2)) "
                + "handoff_cpu_us=\(median(cpu(handOff)).formatted(2)) perstream_cpu_us=\(median(cpu(perStream)).formatted(2)) "
                + "over_handoff_paired_median=\(paired(session, handOff, cpuOf)) over_raw_paired_median=\(paired(session, raw, cpuOf)) "
                + "over_perstream_paired_median=\(paired(session, perStream, cpuOf)) rate_ratio_paired_median=\(paired(session, raw, rateOf)) "
                + "session_msgs_per_s=\(Int(median(rates(session)))) wakeups_per_read=\(median(wakeUps.sorted()).formatted(2)) "
                + "frames_per_read=\(median(framesPerRead.sorted()).formatted(1)) paced=\(paced ?? 0) rounds=\(rounds) busy=\(busy)")
        }
    }

    private func median(_ sorted: [Double]) -> Double { sorted[sorted.count / 2] }

    /// Messages through a session to a consumer of its `Subscription`; with the wake-ups each
    /// socket read cost: the run loop's (the funnel's inputs) and the consumer's (the batches it
    /// took), per read.
    private func measureSession(port: Int, server: any BenchServer, channel: String) async throws -> (Round, Double, Double) {
        let settings = try AppSettings.Builder().serverURL("ws://127.0.0.1:\(port)/").token("bench").noHeartbeat().build()
        let session = Session(settings: settings, transport: NIOWebSocketTransport())
        var result = Round(seconds: 0, cpuSeconds: 0)
        var wakeUps = 0.0
        var framesPerRead = 0.0
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await session.run() }
            try await session.connect()
            let subscription = try await session.subscribe(to: channel)
            let funnelBefore = await session.funnelCounts
            let (start, cpuStart) = (ContinuousClock.now, Self.cpuSeconds())
            group.addTask { try await publish(on: server, to: channel) }
            var received = 0
            var sum = 0.0
            for try await message in subscription {
                sum += message.data["n"]?.numberValue ?? 0
                received += 1
                if received == messages { break }
            }
            result = Round(seconds: (ContinuousClock.now - start).secondsValue, cpuSeconds: Self.cpuSeconds() - cpuStart)
            let funnel = await session.funnelCounts
            let reads = max(1, funnel.reads - funnelBefore.reads)
            wakeUps = Double(funnel.inputs - funnelBefore.inputs + Int(subscription.batchesTaken)) / Double(reads)
            framesPerRead = Double(messages) / Double(reads)
            await session.shutdown()
            group.cancelAll()
            guard sum > 0 else { throw BenchError("no payload read") }
        }
        return (result, wakeUps, framesPerRead)
    }

    /// The round's messages, published at once or paced (`--paced`).
    private func publish(on server: any BenchServer, to channel: String) async throws {
        if let paced {
            try await server.publish(messages, to: channel, paced: paced)
        } else {
            try await server.publish(messages, to: channel)
        }
    }

    /// What a raw client's decoded messages go to.
    enum Consumer {
        /// None: each is dropped where it was decoded.
        case none
        /// A consumer task, one array per read (the least an `AsyncSequence` needs).
        case perRead
        /// A consumer task, through an `AsyncStream` of messages, one yield each (what an app
        /// writes by hand).
        case perMessage
    }

    /// Messages on a bare NIO WebSocket connection: authenticate and subscribe by hand, then
    /// decode each text frame with the same codec (no ordering, no dedupe); the messages go to
    /// `consumer`, which reads each one's `data`.
    private func measureRaw(port: Int, server: any BenchServer, channel: String, consumer kind: Consumer) async throws -> Round {
        let codec = JSONWireCodec()
        let connection = try await NIOWebSocketTransport().open(url: .init(string: "ws://127.0.0.1:\(port)/")!, headers: [:])
        // The batches the session reads too: the same wake-ups per message on both sides.
        guard let batching = connection as? any EventBatchingConnection else { throw BenchError("the NIO connection hands over batches") }
        var events = BatchedEvents(batching)
        try await connection.send(codec.encode(ClientMessage.authenticate(id: 1, token: Secret("bench"))))
        _ = await events.next()
        try await connection.send(codec.encode(ClientMessage.subscribe(id: 2, channel: channel, since: nil)))
        _ = await events.next()
        let (start, cpuStart) = (ContinuousClock.now, Self.cpuSeconds())
        async let published: Void = publish(on: server, to: channel)
        var received = 0
        var checksum = 0.0
        let total = messages
        switch kind {
        case .perRead:
            let (reads, consumer) = AsyncStream<[ChannelMessage]>.makeStream()
            let consuming = Task {
                var (sum, count): (Double, Int) = (0, 0)
                for await read in reads {
                    for message in read { sum += message.data["n"]?.numberValue ?? 0 }
                    count += read.count
                    if count >= total { break }
                }
                return sum
            }
            while received < messages, let read = await events.nextRead() {
                var decoded: [ChannelMessage] = []
                for case .frame(let frame) in read {
                    if case .message(let message) = try codec.decode(frame) { decoded.append(message) }
                }
                received += decoded.count
                consumer.yield(decoded)
            }
            consumer.finish()
            checksum = await consuming.value
        case .perMessage:
            let (stream, consumer) = AsyncStream<ChannelMessage>.makeStream()
            let consuming = Task {
                var (sum, count): (Double, Int) = (0, 0)
                for await message in stream {
                    sum += message.data["n"]?.numberValue ?? 0
                    count += 1
                    if count >= total { break }
                }
                return sum
            }
            while received < messages, let event = await events.next() {
                if case .frame(let frame) = event, case .message(let message) = try codec.decode(frame) {
                    received += 1
                    consumer.yield(message)
                }
            }
            consumer.finish()
            checksum = await consuming.value
        case .none:
            while received < messages, let event = await events.next() {
                if case .frame(let frame) = event, case .message(let message) = try codec.decode(frame) {
                    received += 1
                    checksum += message.data["n"]?.numberValue ?? 0
                }
            }
        }
        let round = Round(seconds: (ContinuousClock.now - start).secondsValue, cpuSeconds: Self.cpuSeconds() - cpuStart)
        try await published
        await connection.close(code: .normal, reason: "done")
        guard checksum > 0 else { throw BenchError("no message decoded") }
        return round
    }

    /// This process's CPU time so far: user + system.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        #if os(Linux)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

/// Events one at a time from a connection's batches, without a task in between.
struct BatchedEvents {
    let connection: any EventBatchingConnection
    var iterator: AsyncStream<[TransportEvent]>.AsyncIterator
    private var pending: [TransportEvent] = []
    private var index = 0

    init(_ connection: any EventBatchingConnection) {
        self.connection = connection
        iterator = connection.eventBatches.makeAsyncIterator()
    }

    mutating func next() async -> TransportEvent? {
        guard await refill() else { return nil }
        defer { index += 1 }
        return pending[index]
    }

    /// The rest of the read being taken, or the next read whole.
    mutating func nextRead() async -> ArraySlice<TransportEvent>? {
        guard await refill() else { return nil }
        defer { index = pending.count }
        return pending[index...]
    }

    /// Takes the next read once the current one is used up; `false` when the reads have ended.
    private mutating func refill() async -> Bool {
        guard index == pending.count else { return true }
        guard let batch = await iterator.next() else { return false }
        // Taken: the transport may read on (it holds no more than its limit untaken).
        connection.reads.taken(batch)
        pending = batch
        index = 0
        return true
    }
}

extension Duration {
    var secondsValue: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}

import NIOCore
import NIOHTTP1
import NIOPosix
public import SDK
import SDKTesting
import NIOWebSocket

/// The reference realtime server: the whole protocol (``ServerCore``) over real WebSockets on
/// swift-nio, with fault injection. `run()` serves until the calling task is cancelled; the
/// methods change faults, drop or close connections, and publish, while it runs.
public final class RealtimeServer: Sendable {
    public struct Configuration: Sendable {
        public var host: String
        /// 0 picks a free port; ``run(onBound:)`` reports it.
        public var port: Int
        /// Accepted tokens; `nil` accepts any.
        public var tokens: Set<String>?
        /// Messages kept per channel for `since` catch-up.
        public var retention: Int
        public var faults: ServerFaults
        /// Timeouts and queue bounds (defaults in ``ServerLimits``).
        public var limits: ServerLimits

        public init(
            host: String = "127.0.0.1", port: Int = 0, tokens: Set<String>? = nil, retention: Int = 1000,
            faults: ServerFaults = ServerFaults(), limits: ServerLimits = ServerLimits()
        ) {
            self.host = host
            self.port = port
            self.tokens = tokens
            self.retention = retention
            self.faults = faults
            self.limits = limits
        }
    }

    /// What a connection's writer does, in order.
    enum Outbound: Sendable {
        /// Frames the core produced together (a subscribe's `ok` and its catch-up), written with
        /// one flush.
        case frames([TransportFrame], at: ContinuousClock.Instant)
        case close(CloseCode, reason: String)
    }

    struct Connection {
        let channel: any Channel
        let outbound: OutboundQueue
        /// Bytes handed to the writer that it has not taken yet.
        var queuedBytes = 0
        /// When the client last sent a frame.
        var lastSeen = ContinuousClock.now
        /// The server is closing it: nothing more is queued or applied.
        var isClosing = false
    }

    struct State {
        var core: ServerCore
        var faults: ServerFaults
        var connections: [ServerCore.ConnectionID: Connection] = [:]
        var nextID: ServerCore.ConnectionID = 0
        var acceptedTotal = 0
        var connectionWaiters = CountWaiters(.exactly)
        /// Fired when a freeze ends: what it held goes on.
        var thaw: OneShot?
        var peakQueuedBytes = 0
        var slowConsumerCloses = 0
        var timeoutCloses = 0
        /// Each upgrade in progress, by its channel, from the decision to the WebSocket (or the
        /// refusal's HTTP answer): how it was answered, and a close asked for meanwhile (its 101
        /// can reach the client before the connection is registered), carried out as it registers.
        var upgrades: [ObjectIdentifier: (answer: UpgradeAnswer, close: CloseDuringUpgrade?)] = [:]

        /// Marks every accepted upgrade in progress to be closed (or dropped) as it registers.
        mutating func closeUpgrading(_ close: CloseDuringUpgrade) {
            for (channel, upgrade) in upgrades {
                if case .refuse = upgrade.answer { continue }
                upgrades[channel]?.close = close
            }
        }
        var upgradeRequests = 0
        var upgradeRequestWaiters = CountWaiters(.atLeast)
        var refusedUpgrades = 0

        /// Tasks waiting for a number of upgrades in progress.
        var upgradeWaiters = CountWaiters(.exactly)

        /// The waiters whose count is now met (open connections, upgrades in progress).
        mutating func readyWaiters() -> [OneShot] {
            connectionWaiters.ready(count: connections.count) + upgradeWaiters.ready(count: upgrades.count)
        }
    }

    public let configuration: Configuration
    let state: Locked<State>

    public init(_ configuration: Configuration = Configuration()) {
        self.configuration = configuration
        var core = ServerCore(.init(tokens: configuration.tokens, retention: configuration.retention, deduplicationWindow: configuration.limits.deduplicationWindow))
        core.rejectsAllCredentials = configuration.faults.rejectCredentials
        state = Locked(State(core: core, faults: configuration.faults, thaw: configuration.faults.freeze ? OneShot() : nil))
    }

    // MARK: The in-process handle

    public var faults: ServerFaults { state.withLock { $0.faults } }

    public func setFaults(_ faults: ServerFaults) {
        let thawed: OneShot? = state.withLock { state in
            state.faults = faults
            state.core.rejectsAllCredentials = faults.rejectCredentials
            if faults.freeze {
                if state.thaw == nil { state.thaw = OneShot() }
                return nil
            }
            defer { state.thaw = nil }
            return state.thaw
        }
        thawed?.fire()
    }

    public func updateFaults(_ change: (inout ServerFaults) -> Void) {
        var faults = self.faults
        change(&faults)
        setFaults(faults)
    }

    /// WebSocket connections open now.
    public var openConnectionCount: Int { state.withLock { $0.connections.count } }
    /// The connections subscribed to `channel` now.
    public func subscriberCount(of channel: String) -> Int { state.withLock { $0.core.subscriberCount(of: channel) } }

    /// WebSocket connections accepted since start.
    public var acceptedConnectionCount: Int { state.withLock { $0.acceptedTotal } }

    /// WebSocket upgrade requests to `/` since start (accepted or refused).
    public var upgradeRequestCount: Int { state.withLock { $0.upgradeRequests } }

    /// Upgrade requests refused (a version-2 request's credentials or list).
    public var refusedUpgradeCount: Int { state.withLock { $0.refusedUpgrades } }

    /// Bytes queued for all connections' writers now.
    public var queuedByteCount: Int { state.withLock { $0.connections.values.reduce(0) { $0 + $1.queuedBytes } } }

    /// The most bytes ever queued for one connection (bounded by ``ServerLimits/maxQueuedBytes``).
    public var peakQueuedBytes: Int { state.withLock { $0.peakQueuedBytes } }

    /// Connections closed because their reader fell too far behind (4008).
    public var slowConsumerCloseCount: Int { state.withLock { $0.slowConsumerCloses } }

    /// Connections closed because they did not authenticate in time, or went idle.
    public var timeoutCloseCount: Int { state.withLock { $0.timeoutCloses } }

    /// Returns once the server has decided at least `count` upgrade requests (before it answers).
    public func waitForUpgradeRequests(_ count: Int) async {
        let signal = state.withLock { $0.upgradeRequestWaiters.register(target: count, count: $0.upgradeRequests) }
        await signal?.wait()
    }

    /// Returns once exactly `count` upgrades are in progress: decided, and neither a WebSocket
    /// nor an HTTP answer yet (nor closed).
    public func waitForUpgradesInProgress(_ count: Int) async {
        let signal = state.withLock { $0.upgradeWaiters.register(target: count, count: $0.upgrades.count) }
        await signal?.wait()
    }

    /// Returns once exactly `count` WebSocket connections are open.
    public func waitForOpenConnections(_ count: Int) async {
        let signal = state.withLock { $0.connectionWaiters.register(target: count, count: $0.connections.count) }
        await signal?.wait()
    }

    /// Publishes from the server side; returns the sequence number. Data the protocol cannot
    /// carry (too large, too deep, NaN) is refused before it gets a number.
    @discardableResult
    public func publish(_ data: JSONValue, to channel: String) throws(CodecError) -> UInt64 {
        let result: Result<UInt64, CodecError> = state.withLock { state in
            do throws(CodecError) {
                let (sequence, outputs) = try state.core.publish(data, to: channel)
                Self.dispatch(outputs, in: &state, limits: configuration.limits)
                return .success(sequence)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Publishes `data` to `channel` `count` times at once: the frames reach each subscriber's
    /// writer as one batch (a benchmark's burst). Returns the last sequence number.
    @discardableResult
    public func publish(_ data: JSONValue, to channel: String, count: Int) throws(CodecError) -> UInt64 {
        let result: Result<UInt64, CodecError> = state.withLock { state in
            do throws(CodecError) {
                var sequence: UInt64 = 0
                var outputs: [ServerCore.Output] = []
                for _ in 0..<count {
                    let (next, fanOut) = try state.core.publish(data, to: channel)
                    sequence = next
                    outputs += fanOut
                }
                // Grouped per connection, so each subscriber's writer gets one batch.
                outputs.sort { lhs, rhs in
                    guard case .send(let left, _) = lhs, case .send(let right, _) = rhs else { return false }
                    return left < right
                }
                Self.dispatch(outputs, in: &state, limits: configuration.limits)
                return .success(sequence)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Drops every connection without a close frame (as a network loss would).
    public func dropAllConnections() {
        let channels = state.withLock { state in
            state.closeUpgrading(.drop)
            return state.connections.values.map(\.channel)
        }
        for channel in channels { channel.close(promise: nil) }
    }

    /// What ``closeAllConnections(code:reason:)`` or ``dropAllConnections()`` asked of a
    /// connection that was still upgrading.
    enum CloseDuringUpgrade {
        case frame(CloseCode, reason: String)
        case drop
    }

    /// Closes every connection with a close frame carrying `code` and `reason`. A code that
    /// must never be sent (RFC 6455 §7.4: see ``CloseCode/mayBeSent``) is refused.
    public func closeAllConnections(code: CloseCode, reason: String = "") throws(InvalidCloseCode) {
        guard code.mayBeSent else { throw InvalidCloseCode(code: code) }
        state.withLock { state in
            for id in state.connections.keys { Self.close(id, code: code, reason: reason, in: &state) }
            state.closeUpgrading(.frame(code, reason: reason))
        }
    }

    /// Carries out the core's outputs: frames and closes go to each connection's writer, in
    /// order (under the lock, so every client sees a channel's messages in sequence order). A
    /// connection whose writer already holds more than the limit is a slow consumer: it is
    /// closed (4008) rather than queued for without bound.
    static func dispatch(_ outputs: [ServerCore.Output], in state: inout State, limits: ServerLimits) {
        let now = ContinuousClock.now
        // Consecutive frames for one connection go to its writer as one batch.
        var batchID: ServerCore.ConnectionID?
        var batch: [TransportFrame] = []
        func flushBatch() {
            guard let id = batchID else { return }
            state.connections[id]?.outbound.yield(.frames(batch, at: now))
            batchID = nil
            batch = []
        }
        for output in outputs {
            switch output {
            case .send(let id, let frame):
                guard var connection = state.connections[id], !connection.isClosing else { continue }
                let size = frame.byteCount
                guard connection.queuedBytes + size <= limits.maxQueuedBytes else {
                    flushBatch()
                    state.slowConsumerCloses += 1
                    closeSlowConsumer(id, in: &state)
                    continue
                }
                connection.queuedBytes += size
                state.peakQueuedBytes = max(state.peakQueuedBytes, connection.queuedBytes)
                state.connections[id] = connection
                if batchID != id { flushBatch() }
                batchID = id
                batch.append(frame)
            case .close(let id, let code, let reason):
                flushBatch()
                close(id, code: code, reason: reason, in: &state)
            }
        }
        flushBatch()
    }

    /// An orderly close: the close frame follows what is queued; the socket goes at the latest
    /// two seconds later, whether or not the client answered (or read anything).
    static func close(_ id: ServerCore.ConnectionID, code: CloseCode, reason: String, in state: inout State) {
        guard var connection = state.connections[id], !connection.isClosing else { return }
        connection.isClosing = true
        state.connections[id] = connection
        connection.outbound.yield(.close(code, reason: reason))
        let channel = connection.channel
        channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
    }

    /// A reader too far behind: what is queued for it is dropped (its writer ends), a close
    /// frame 4008 goes out if the socket still takes one, and the socket goes. The client
    /// catches up by sequence on its next connection.
    static func closeSlowConsumer(_ id: ServerCore.ConnectionID, in state: inout State) {
        guard var connection = state.connections[id], !connection.isClosing else { return }
        connection.isClosing = true
        state.connections[id] = connection
        connection.outbound.finish()
        let channel = connection.channel
        WebSocketFrameRules.fail(channel, code: WebSocketErrorCode(codeNumber: Int(CloseCode.slowConsumer.rawValue)), reason: "slow consumer")
        channel.eventLoop.scheduleTask(in: .milliseconds(500)) { channel.close(promise: nil) }
    }

    // MARK: Serving

    /// Runs the server for the duration of `body`, which gets the bound port; stops it after.
    public func withRunning<Result: Sendable>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (Int) async throws -> Result
    ) async throws -> Result {
        try await withThrowingTaskGroup(of: Void.self, isolation: isolation) { group in
            let (ports, portSink) = AsyncStream<Int>.makeStream()
            group.addTask {
                try await self.run { port in
                    portSink.yield(port)
                    portSink.finish()
                }
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else {
                try await group.waitForAll()
                throw TransportError(.connectionFailed, "the server stopped before it was bound")
            }
            defer { group.cancelAll() }
            return try await body(port)
        }
    }

    enum Accepted: Sendable {
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, Registration)
        /// Plain HTTP, or an upgrade refused with this status (credentials in a version-2 request).
        case http(NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, refused: (status: Int, reason: String)?)
    }

    /// Decides a WebSocket upgrade request for `channel` (the protocol version, a version-2
    /// request's credentials and subscriptions) and remembers the answer for its handlers.
    func answerUpgrade(_ head: HTTPRequestHead, on channel: any Channel) -> UpgradeAnswer {
        let offered = head.headers["Sec-WebSocket-Protocol"].flatMap { $0.split(separator: ",") }.map { $0.split(separator: " ").joined() }
        var headers: [String: String] = [:]
        for (name, value) in head.headers { headers[name] = headers[name].map { "\($0), \(value)" } ?? value }
        let (answer, decided) = state.withLock { state in
            let answer = state.core.answerUpgrade(subprotocols: offered, headers: headers)
            state.upgrades[ObjectIdentifier(channel)] = (answer, nil)
            state.upgradeRequests += 1
            if case .refuse = answer { state.refusedUpgrades += 1 }
            return (answer, state.upgradeRequestWaiters.ready(count: state.upgradeRequests) + state.readyWaiters())
        }
        for signal in decided { signal.fire() }
        // An upgrade that dies before it completes (the client gone while its 101 is delayed)
        // leaves no entry behind: a later channel at the same address would find it. The
        // closure holds the channel, so no other channel has its identifier until it runs.
        channel.closeFuture.whenComplete { [self, channel] _ in _ = takeUpgradeAnswer(of: channel) }
        return answer
    }

    /// The answer ``answerUpgrade(_:on:)`` gave for `channel`, forgotten.
    func takeUpgradeAnswer(of channel: any Channel) -> UpgradeAnswer? {
        let (answer, ready) = state.withLock { state in
            let answer = state.upgrades.removeValue(forKey: ObjectIdentifier(channel))?.answer
            return (answer, state.readyWaiters())
        }
        for signal in ready { signal.fire() }
        return answer
    }

    /// Binds, reports the port, and serves until the calling task is cancelled.
    public func run(onBound: @Sendable (Int) -> Void = { _ in }) async throws {
        let server: NIOAsyncChannel<EventLoopFuture<Accepted>, Never> = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .bind(host: configuration.host, port: configuration.port) { [limits = configuration.limits] channel in
                channel.eventLoop.makeCompletedFuture {
                    // A slowloris upgrade (or an admin request) is cut off: the whole request
                    // must arrive within the limit.
                    let upgradeDeadline = channel.eventLoop.scheduleTask(in: limits.upgradeTimeout.timeAmount) { channel.close(promise: nil) }
                    let upgrader = NIOTypedWebSocketServerUpgrader<Accepted>(
                        maxFrameSize: 1 << 20,
                        shouldUpgrade: { [self] channel, head in
                            let faults = self.faults
                            let refuse = faults.refuseConnections || !(head.uri == "/" || head.uri.hasPrefix("/?"))
                            guard !refuse else { return channel.eventLoop.makeSucceededFuture(nil) }
                            let answer = answerUpgrade(head, on: channel)
                            var headers = HTTPHeaders()
                            switch answer {
                            case .refuse: return channel.eventLoop.makeSucceededFuture(nil)
                            case .version2: headers.add(name: "Sec-WebSocket-Protocol", value: answer.subprotocol ?? "")
                            case .version1: break
                            }
                            let answered = headers
                            guard faults.frameDelay > .zero else { return channel.eventLoop.makeSucceededFuture(answered) }
                            // The emulated latency covers the upgrade's answer too.
                            return channel.eventLoop.scheduleTask(in: faults.frameDelay.timeAmount) { answered }.futureResult.map { Optional($0) }
                        },
                        upgradePipelineHandler: { [self] channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                upgradeDeadline.cancel()
                                try channel.pipeline.syncOperations.addHandler(WebSocketFrameRules())
                                try channel.pipeline.syncOperations.addHandler(
                                    NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1 << 16, maxAccumulatedFrameSize: 1 << 20)
                                )
                                let wrapped = try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel)
                                let registration = register(channel)
                                return Accepted.websocket(wrapped, registration)
                            }
                        }
                    )
                    let configuration = NIOTypedHTTPServerUpgradeConfiguration<Accepted>(
                        upgraders: [upgrader],
                        notUpgradingCompletionHandler: { [self] channel in
                            channel.eventLoop.makeCompletedFuture {
                                var refused: (status: Int, reason: String)?
                                if case .refuse(let status, let reason)? = takeUpgradeAnswer(of: channel) { refused = (status, reason) }
                                return Accepted.http(try NIOAsyncChannel(wrappingChannelSynchronously: channel), refused: refused)
                            }
                        }
                    )
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(
                        configuration: .init(upgradeConfiguration: configuration)
                    )
                }
            }
        onBound(server.channel.localAddress?.port ?? configuration.port)
        try await withThrowingDiscardingTaskGroup { group in
            try await server.executeThenClose { inbound in
                for try await accepted in inbound {
                    group.addTask {
                        do {
                            switch try await accepted.get() {
                            case .websocket(let channel, let registration): await self.serve(channel, registration: registration)
                            case .http(let channel, let refused): await self.serveHTTP(channel, refused: refused)
                            }
                        } catch {
                            // A connection that failed its handshake concerns only itself.
                        }
                    }
                }
            }
        }
    }
}

extension Duration {
    /// The same span as NIO's `TimeAmount`.
    var timeAmount: TimeAmount {
        let (seconds, attoseconds) = components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}


/// A close code that must never be put in a close frame (RFC 6455 §7.4).
public struct InvalidCloseCode: Error, CustomStringConvertible {
    public let code: CloseCode
    public var description: String { "close code \(code) must never be sent (RFC 6455 §7.4: 1000–1003, 1007–1014 and 3000–4999 may)" }
}

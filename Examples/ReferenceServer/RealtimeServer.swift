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

        public init(host: String = "127.0.0.1", port: Int = 0, tokens: Set<String>? = nil, retention: Int = 1000, faults: ServerFaults = ServerFaults()) {
            self.host = host
            self.port = port
            self.tokens = tokens
            self.retention = retention
            self.faults = faults
        }
    }

    /// What a connection's writer does, in order.
    enum Outbound: Sendable {
        case frame(TransportFrame, at: ContinuousClock.Instant)
        case close(CloseCode, reason: String)
    }

    struct Connection {
        let channel: any Channel
        let outbound: AsyncStream<Outbound>.Continuation
    }

    struct State {
        var core: ServerCore
        var faults: ServerFaults
        var connections: [ServerCore.ConnectionID: Connection] = [:]
        var nextID: ServerCore.ConnectionID = 0
        var acceptedTotal = 0
        var connectionWaiters = CountWaiters(.exactly)

        mutating func readyWaiters() -> [OneShot] {
            connectionWaiters.ready(count: connections.count)
        }
    }

    public let configuration: Configuration
    let state: Locked<State>

    public init(_ configuration: Configuration = Configuration()) {
        self.configuration = configuration
        var core = ServerCore(.init(tokens: configuration.tokens, retention: configuration.retention))
        core.rejectsAllCredentials = configuration.faults.rejectCredentials
        state = Locked(State(core: core, faults: configuration.faults))
    }

    // MARK: The in-process handle

    public var faults: ServerFaults { state.withLock { $0.faults } }

    public func setFaults(_ faults: ServerFaults) {
        state.withLock { state in
            state.faults = faults
            state.core.rejectsAllCredentials = faults.rejectCredentials
        }
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
                Self.dispatch(outputs, in: &state)
                return .success(sequence)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Drops every connection without a close frame (as a network loss would).
    public func dropAllConnections() {
        let channels = state.withLock { $0.connections.values.map(\.channel) }
        for channel in channels { channel.close(promise: nil) }
    }

    /// Closes every connection with a close frame carrying `code` and `reason`.
    public func closeAllConnections(code: CloseCode, reason: String = "") {
        state.withLock { state in
            for connection in state.connections.values { connection.outbound.yield(.close(code, reason: reason)) }
        }
    }

    /// Carries out the core's outputs: frames and closes go to each connection's writer, in
    /// order (under the lock, so every client sees a channel's messages in sequence order).
    static func dispatch(_ outputs: [ServerCore.Output], in state: inout State) {
        let now = ContinuousClock.now
        for output in outputs {
            switch output {
            case .send(let id, let frame):
                state.connections[id]?.outbound.yield(.frame(frame, at: now))
            case .close(let id, let code, let reason):
                state.connections[id]?.outbound.yield(.close(code, reason: reason))
            }
        }
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
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case http(NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>)
    }

    /// Binds, reports the port, and serves until the calling task is cancelled.
    public func run(onBound: @Sendable (Int) -> Void = { _ in }) async throws {
        let server: NIOAsyncChannel<EventLoopFuture<Accepted>, Never> = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .bind(host: configuration.host, port: configuration.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOTypedWebSocketServerUpgrader<Accepted>(
                        maxFrameSize: 1 << 20,
                        shouldUpgrade: { [self] channel, head in
                            let faults = self.faults
                            let refuse = faults.refuseConnections || !(head.uri == "/" || head.uri.hasPrefix("/?"))
                            guard !refuse, faults.frameDelay > .zero else {
                                return channel.eventLoop.makeSucceededFuture(refuse ? nil : HTTPHeaders())
                            }
                            // The emulated latency covers the upgrade's answer too.
                            let (seconds, attoseconds) = faults.frameDelay.components
                            let delay = TimeAmount.nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
                            return channel.eventLoop.scheduleTask(in: delay) { HTTPHeaders() }.futureResult.map { Optional($0) }
                        },
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(
                                    NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1 << 16, maxAccumulatedFrameSize: 1 << 20)
                                )
                                return Accepted.websocket(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
                            }
                        }
                    )
                    let configuration = NIOTypedHTTPServerUpgradeConfiguration<Accepted>(
                        upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in
                            channel.eventLoop.makeCompletedFuture {
                                return Accepted.http(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
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
                            case .websocket(let channel): await self.serve(channel)
                            case .http(let channel): await self.serveHTTP(channel)
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

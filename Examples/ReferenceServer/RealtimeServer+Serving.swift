import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import SDK
import SDKTesting

extension RealtimeServer {
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
                            case .upgraded: headers.add(name: "Sec-WebSocket-Protocol", value: answer.subprotocol ?? "")
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

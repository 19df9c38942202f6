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
        /// Frames handed to the connections' writers, in all (`/admin/status` says it).
        var framesSent = 0
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

    /// How many frames the server has handed to its connections' writers, in all.
    public var framesSentCount: Int { state.withLock { $0.framesSent } }

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

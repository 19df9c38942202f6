import NIOCore
import NIOTransport
import SDK
import SDKTesting
import NIOWebSocket

extension RealtimeServer {
    /// Serves one WebSocket: a reader feeding the core, and a writer draining this
    /// connection's bounded outbound queue (delayed by the fault's latency, held while frozen).
    /// The authentication and idle limits are timers on the connection's event loop.
    /// A WebSocket connection the core knows, from the moment its upgrade completed.
    struct Registration: Sendable {
        let id: ServerCore.ConnectionID
        let queue: OutboundQueue
    }

    /// Registers the upgraded `channel` with the core, on its event loop as the upgrade
    /// completes, with the answer its upgrade was given (taken under the same lock, so a close
    /// of every connection finds it either upgrading or registered). A version-2 connection's
    /// answers (the carried subscriptions' `ok`s and catch-up) are written right behind the
    /// 101, not after the connection's tasks start.
    func register(_ channel: any Channel) -> Registration {
        let queue = OutboundQueue()
        let (id, opened, first, drop): (ServerCore.ConnectionID, [OneShot], [TransportFrame], Bool) = state.withLock { state in
            state.nextID += 1
            state.acceptedTotal += 1
            let id = state.nextID
            let upgrade = state.upgrades.removeValue(forKey: ObjectIdentifier(channel))
            state.connections[id] = Connection(channel: channel, outbound: queue)
            var outputs = state.core.connectionOpened(id, upgrade: upgrade?.answer ?? .version1)
            var first: [TransportFrame] = []
            if state.faults.frameDelay == .zero {
                // Written now, in order, before anything the writer will take.
                // (Taken as one prefix: removing them one at a time moved the rest each time.)
                for output in outputs {
                    guard case .send(id, let frame) = output else { break }
                    first.append(frame)
                }
                outputs.removeFirst(first.count)
                state.framesSent += first.count
            }
            Self.dispatch(outputs, in: &state, limits: configuration.limits)
            var drop = false
            switch upgrade?.close {
            case .frame(let code, let reason)?: Self.close(id, code: code, reason: reason, in: &state)
            case .drop?: drop = true
            case nil: break
            }
            return (id, state.readyWaiters(), first, drop)
        }
        if !first.isEmpty { Self.writeFirst(first, to: channel) }
        for signal in opened { signal.fire() }
        if drop { channel.close(promise: nil) }
        return Registration(id: id, queue: queue)
    }

    func serve(_ channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, registration: Registration) async {
        let (id, queue) = (registration.id, registration.queue)
        let underlying = channel.channel
        let limits = configuration.limits
        let authTimer = underlying.eventLoop.scheduleTask(in: limits.authenticationTimeout.timeAmount) { [self] in
            closeIfUnauthenticated(id)
        }
        let check = max(limits.idleTimeout / 4, .milliseconds(10)).timeAmount
        let idleTimer = underlying.eventLoop.scheduleRepeatedTask(initialDelay: check, delay: check) { [self] _ in
            closeIfIdle(id, after: limits.idleTimeout)
        }
        defer {
            authTimer.cancel()
            idleTimer.cancel()
            let closed = state.withLock { state in
                state.core.connectionClosed(id)
                state.connections[id] = nil
                return state.readyWaiters()
            }
            for signal in closed { signal.fire() }
        }
        try? await channel.executeThenClose { inbound, outbound in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await self.write(queue, of: id, to: outbound, channel: underlying) }
                defer { queue.finish() }
                for try await frame in inbound {
                    await holdWhileFrozen()
                    guard noteFrame(from: id) else { continue }
                    switch frame.opcode {
                    case .text:
                        // RFC 6455 §8.1: a text frame that is not UTF-8 fails the connection (1007).
                        guard let text = String(validating: frame.unmaskedData.readableBytesView, as: UTF8.self) else {
                            state.withLock { Self.close(id, code: CloseCode(1007), reason: "invalid UTF-8 in a text frame", in: &$0) }
                            continue
                        }
                        receive(.text(text), from: id)
                    case .binary:
                        receive(.binary(Array(buffer: frame.unmaskedData)), from: id)
                    case .ping:
                        try await outbound.write(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData))
                    case .connectionClose:
                        try? await outbound.write(WebSocketFrame(fin: true, opcode: .connectionClose, data: Self.closeReply(to: frame.unmaskedData)))
                        queue.finish()
                        group.cancelAll()
                        return
                    default:
                        break
                    }
                }
                queue.finish()
                group.cancelAll()
            }
        }
    }

    /// The writer: frames in order, each after the emulated latency, none while frozen; the
    /// bytes it takes leave the connection's queue. What was queued while it wrote goes out in
    /// one write (one flush).
    private func write(
        _ queue: OutboundQueue, of id: ServerCore.ConnectionID,
        to outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>, channel: any Channel
    ) async throws {
        while let items = await queue.next() {
            await holdWhileFrozen()
            var frames: [WebSocketFrame] = []
            for item in items {
                switch item {
                case .frames(let batch, let at):
                    let delay = state.withLock { state in
                        state.connections[id]?.queuedBytes -= batch.reduce(0) { $0 + $1.byteCount }
                        return state.faults.frameDelay
                    }
                    if delay > .zero {
                        // Each batch leaves its own delay after it was produced: what is ahead of
                        // it goes first.
                        if !frames.isEmpty { try await outbound.write(contentsOf: frames) }
                        frames = []
                        try? await Task.sleep(until: at + delay, clock: .continuous)
                    }
                    frames += batch.map(Self.webSocketFrame)
                case .close(let code, let reason):
                    if !frames.isEmpty { try await outbound.write(contentsOf: frames) }
                    var data = ByteBuffer()
                    data.write(webSocketErrorCode: WebSocketErrorCode(codeNumber: Int(code.rawValue)))
                    data.writeString(reason)
                    try? await outbound.write(WebSocketFrame(fin: true, opcode: .connectionClose, data: data))
                    // Give the client a moment to answer, then let the socket go.
                    channel.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
                    return
                }
            }
            if !frames.isEmpty { try await outbound.write(contentsOf: frames) }
        }
    }

    private func receive(_ frame: TransportFrame, from id: ServerCore.ConnectionID) {
        state.withLock { state in
            let outputs = state.core.received(frame, from: id)
            Self.dispatch(outputs, in: &state, limits: configuration.limits)
            // Idle counts from when the server is done with the client's last frame: the time
            // it spends on a large request is not the client's silence.
            state.connections[id]?.lastSeen = .now
        }
    }

    /// Notes a frame from the client (for the idle limit); false when the connection is being
    /// closed, and the frame is not applied.
    private func noteFrame(from id: ServerCore.ConnectionID) -> Bool {
        state.withLock { state in
            guard state.connections[id]?.isClosing == false else { return false }
            state.connections[id]?.lastSeen = .now
            return true
        }
    }

    /// While the server is frozen, traffic is held (not dropped): it goes on at the thaw, as
    /// after a process was stopped and continued.
    func holdWhileFrozen() async {
        while let thaw = state.withLock({ $0.faults.freeze ? $0.thaw : nil }) {
            await thaw.wait()
            if Task.isCancelled { return }
        }
    }

    private func closeIfUnauthenticated(_ id: ServerCore.ConnectionID) {
        state.withLock { state in
            guard state.connections[id] != nil, !state.core.isAuthenticated(id) else { return }
            state.timeoutCloses += 1
            Self.close(id, code: .authenticationTimeout, reason: "authentication timeout", in: &state)
        }
    }

    private func closeIfIdle(_ id: ServerCore.ConnectionID, after limit: Duration) {
        state.withLock { state in
            guard let connection = state.connections[id], !connection.isClosing, !state.faults.freeze,
                  ContinuousClock.now - connection.lastSeen > limit else { return }
            state.timeoutCloses += 1
            Self.close(id, code: .transient, reason: "idle", in: &state)
        }
    }

    /// The answer to a client's close frame (RFC 6455 §5.5.1, §7.4): its code echoed; 1002 for a
    /// one-byte body or a code that must never be sent; 1007 for a reason that is not UTF-8;
    /// an empty body for an empty body.
    static func closeReply(to body: ByteBuffer) -> ByteBuffer {
        var body = body
        var reply = ByteBuffer()
        guard body.readableBytes > 0 else { return reply }
        guard body.readableBytes >= 2, let raw = body.readInteger(as: UInt16.self), CloseCode(raw).mayBeSent else {
            reply.write(webSocketErrorCode: .protocolError)
            return reply
        }
        guard String(validating: body.readableBytesView, as: UTF8.self) != nil else {
            reply.write(webSocketErrorCode: WebSocketErrorCode(codeNumber: 1007))
            return reply
        }
        reply.writeInteger(raw)
        return reply
    }

    /// Writes a connection's first frames (a resumed set's thousand `ok`s and catch-ups) as
    /// bytes in one write, after the frame encoder; one at a time, each took its own pass
    /// through the pipeline. On the channel's event loop.
    private static func writeFirst(_ frames: [TransportFrame], to channel: any Channel) {
        guard let encoder = try? channel.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self) else {
            for frame in frames { channel.write(webSocketFrame(frame), promise: nil) }
            channel.flush()
            return
        }
        var bytes = channel.allocator.buffer(capacity: WebSocketFrameWriter.byteCount(of: frames, masked: false))
        var keys = SystemRandomNumberGenerator()
        WebSocketFrameWriter.write(frames, masked: false, keys: &keys, into: &bytes)
        encoder.writeAndFlush(NIOAny(bytes), promise: nil)
    }

    static func webSocketFrame(_ frame: TransportFrame) -> WebSocketFrame {
        switch frame {
        case .text(let text): WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: text))
        case .binary(let bytes): WebSocketFrame(fin: true, opcode: .binary, data: ByteBuffer(bytes: bytes))
        }
    }
}

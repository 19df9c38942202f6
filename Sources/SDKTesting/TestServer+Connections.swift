import SDK
import Foundation

extension TestServer {
    /// Accepts a connection whose upgrade offered `subprotocols` with `headers`: its id and the
    /// subprotocol chosen. A version-2 upgrade is answered right away (the carried
    /// subscriptions' `ok`s and catch-up); refused credentials throw with HTTP 401.
    func accept(
        _ continuation: AsyncStream<TransportEvent>.Continuation, ledger: EventLedger?, subprotocols: [String], headers: [String: String]
    ) throws -> (ServerCore.ConnectionID, subprotocol: String?) {
        order.lock()
        defer { order.unlock() }
        let accepted: Result<(ServerCore.ConnectionID, UpgradeAnswer, [ServerCore.Output]), TransportError> = state.withLock { state in
            guard !state.isRefusing else { return .failure(TransportError(.connectionFailed, "connection refused by the test server")) }
            let upgrade = state.core.answerUpgrade(subprotocols: subprotocols, headers: headers)
            if case .refuse(let status, let reason) = upgrade {
                return .failure(TransportError(.handshakeFailed, "the test server refused the upgrade: \(reason)", httpStatus: status))
            }
            state.nextID += 1
            state.acceptedTotal += 1
            state.connections[state.nextID] = Peer(continuation: continuation, ledger: ledger)
            let outputs = state.core.connectionOpened(state.nextID, upgrade: upgrade)
            if case .upgraded(let request) = upgrade {
                // A version-2 or -3 upgrade: the credentials and subscriptions it carried.
                let authorization = headers.first { $0.key.lowercased() == TetherUpgrade.authorizationHeader.lowercased() }?.value
                state.requests.append((state.nextID, .credentials(authorization.flatMap(TetherUpgrade.bearerToken).map(Secret.init))))
                for entry in request.entries {
                    state.requests.append((state.nextID, .subscribe(channel: entry.channel, from: entry.since.map(StreamPosition.sequence))))
                }
            }
            return .success((state.nextID, upgrade, outputs))
        }
        let (id, upgrade, outputs) = try accepted.get()
        notifyConnectionWaiters()
        notifyRequestWaiters()
        answer(outputs)
        return (id, upgrade.subprotocol)
    }

    func received(_ frame: TransportFrame, from id: ServerCore.ConnectionID) {
        order.lock()
        defer { order.unlock() }
        let (outputs, ready): ([ServerCore.Output], [OneShot]) = state.withLock { state in
            guard state.connections[id] != nil else { return ([], []) }
            state.traffic.clientFrames += 1
            state.traffic.clientBytes += frame.byteCount
            do {
                let message = try state.core.configuration.codec.decodeClientMessage(frame)
                state.received.append(message)
                state.frames.append(.message(message))
                state.requests.append((id, ReceivedRequest(message)))
            } catch {
                state.frames.append(.undecodable(frame, reason: String(describing: error)))
                state.requests.append((id, .undecodable(reason: String(describing: error))))
            }
            let ready = state.messageWaiters.ready(count: state.received.count) + state.requestWaiters.ready(count: state.requests.count)
            guard !state.isFrozen else { return ([], ready) }
            var outputs = state.core.received(frame, from: id)
            if state.losesNextPublishAck, case .publish? = state.received.last {
                state.losesNextPublishAck = false
                outputs = outputs.filter { if case .send(id, _) = $0 { false } else { true } }
                outputs.append(.close(id, .goingAway, reason: "dropped before the acknowledgement"))
            }
            return (outputs, ready)
        }
        answer(outputs)
        for signal in ready { signal.fire() }
    }

    /// Sends `outputs` now, or after the answer delay.
    func answer(_ outputs: [ServerCore.Output]) {
        guard !outputs.isEmpty else { return }
        let delayed: Bool = state.withLock { state in
            guard let (delay, clock) = state.answerDelay else { return false }
            let due = clock.now.advanced(by: delay)
            state.nextDelaySerial += 1
            let serial = state.nextDelaySerial
            state.delayed.append((serial, due, outputs))
            // A unit of the clock's work until it is sent; asleep, it waits for the clock.
            let activity = clock.activity
            activity.begin()
            state.delayTasks[serial] = Task {
                // Cancelled when every connection it answers is gone: it then sends nothing.
                try? await clock.sleepTracked(until: due)
                // Whichever wake-up comes first sends every answer due, in order.
                let due: [[ServerCore.Output]] = self.state.withLock { state in
                    state.delayTasks[serial] = nil
                    let now = clock.now
                    let ready = state.delayed.prefix { $0.due <= now }
                    state.delayed.removeFirst(ready.count)
                    return ready.map(\.outputs)
                }
                for outputs in due { self.perform(outputs) }
                activity.end()
            }
            return true
        }
        if !delayed { perform(outputs) }
    }

    /// A connection is gone: the answers still waiting for it are dropped, and a wait left with
    /// nothing to send ends now rather than sleep on the test clock after the test.
    static func dropDelayedAnswers(to id: ServerCore.ConnectionID, in state: inout State) {
        guard !state.delayed.isEmpty else { return }
        for index in state.delayed.indices {
            state.delayed[index].outputs.removeAll { output in
                switch output {
                case .send(let target, _), .close(let target, _, _): target == id
                }
            }
        }
        for entry in state.delayed where entry.outputs.isEmpty {
            state.delayTasks.removeValue(forKey: entry.serial)?.cancel()
        }
        state.delayed.removeAll { $0.outputs.isEmpty }
    }

    func clientClosed(_ id: ServerCore.ConnectionID) {
        let peer = state.withLock { state in
            state.core.connectionClosed(id)
            Self.dropDelayedAnswers(to: id, in: &state)
            let peer = state.connections.removeValue(forKey: id)
            if peer != nil { state.traffic.closes += 1 }
            return peer
        }
        peer?.finish()
        notifyConnectionWaiters()
    }

    func perform(_ outputs: [ServerCore.Output]) {
        var closed = false
        for output in outputs {
            switch output {
            case .send(let id, let frame):
                let peer = state.withLock { state in
                    let peer = state.connections[id]
                    if peer != nil {
                        state.traffic.serverFrames += 1
                        state.traffic.serverBytes += frame.byteCount
                    }
                    return peer
                }
                peer?.send(.frame(frame))
            case .close(let id, let code, let reason):
                let peer = state.withLock { state in
                    state.core.connectionClosed(id)
                    Self.dropDelayedAnswers(to: id, in: &state)
                    let peer = state.connections.removeValue(forKey: id)
                    if peer != nil { state.traffic.closes += 1 }
                    return peer
                }
                peer?.send(.closed(code: code, reason: reason))
                peer?.finish()
                closed = true
            }
        }
        if closed { notifyConnectionWaiters() }
    }

    func notifyConnectionWaiters() {
        let ready = state.withLock { $0.connectionWaiters.ready(count: $0.connections.count) }
        for signal in ready { signal.fire() }
    }

    func notifyRequestWaiters() {
        let ready = state.withLock { $0.requestWaiters.ready(count: $0.requests.count) }
        for signal in ready { signal.fire() }
    }
}

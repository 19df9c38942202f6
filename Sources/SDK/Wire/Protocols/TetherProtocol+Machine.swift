import ConnectionPolicy
import Foundation

extension TetherProtocol {
    /// One socket's Tether state.
    package struct Machine: WireMachine {
        enum Step: Hashable, Sendable { case opened, authenticating(RequestID), awaitingResumeSet }
        enum Pending {
            case subscribe(SubscriptionID, resumed: Bool)
            /// Carried by the upgrade request; the core has not (yet) asked for it.
            case carried(channel: String, resumed: Bool)
            case unsubscribe
            case publish(RequestID)
            case ping(RequestID)
        }

        let codec: any WireCodec
        var gate = HandshakeGate(Step.opened)
        /// Request ids on the wire are this socket's own (the core's may be anything).
        var nextWireID: RequestID = 0
        var pending: [RequestID: Pending] = [:]

        /// Version 3's resume set on this socket.
        package enum ResumeSet: Sendable {
            /// Not version 3.
            case none
            /// Waiting for the server's first frame, which says whether it answers `entries` (the
            /// subscriptions the upgrade carried by the set `kept`, the last socket's): until then
            /// they count as carried.
            case awaited([TetherUpgrade.Entry], kept: WireSessionState?)
            /// This socket's subscriptions are kept under `token`.
            case issued(token: String)
        }

        var channels: [String: Route] = [:]
        var subscriptions: [SubscriptionID: String] = [:]
        /// Requests go out behind `auth` without waiting for its `ok`.
        let pipelines: Bool
        /// The subscriptions the upgrade carried, when the server chose version 2; nil: version 1.
        let upgraded: [TetherUpgrade.Entry]?
        var resumeSet: ResumeSet

        init(codec: any WireCodec, pipelines: Bool, upgraded: [TetherUpgrade.Entry]?, resumeSet: ResumeSet = .none) {
            self.codec = codec
            self.pipelines = pipelines
            self.upgraded = upgraded
            self.resumeSet = resumeSet
        }

        package mutating func start(credentials: Secret?) -> [WireAction] {
            guard gate.step == .opened else { return [] }
            if let upgraded {
                // Version 2: the 101 says the server accepted the credentials and is answering
                // the carried subscriptions; the core's resubscribes claim them by channel.
                // Version 3: those carried by the set too, unless the server's first frame says
                // it no longer holds the set (then the claimed ones go in frames, and every
                // other request waits for them: a publish must not overtake a resubscribe).
                carry(upgraded)
                guard case .awaited(let bySet, _) = resumeSet else {
                    _ = gate.open()
                    return [.ready]
                }
                carry(bySet)
                gate.advance(to: .awaitingResumeSet)
                return [.ready]
            }
            let id = makeWireID()
            gate.advance(to: .authenticating(id))
            let sent = send(.authenticate(id: id, token: credentials)) ?? []
            return pipelines ? sent + [.pipelining] : sent
        }

        package mutating func receive(_ frame: TransportFrame) -> [WireAction] {
            var actions: [WireAction] = []
            receive(frame, into: &actions)
            return actions
        }

        mutating func receive(_ frame: TransportFrame, into actions: inout [WireAction]) {
            guard !gate.isEnded else { return }
            let message: ServerMessage
            do {
                message = try codec.decode(frame)
            } catch {
                actions += end(WireEnding(.error("bad frame from server: \(error)"), .retry))
                return
            }
            if case .message(let message) = message {
                if let delivery = delivery(of: message) { actions.append(delivery) }
            } else {
                actions += handle(message)
            }
        }

        /// The server answers `entries` (carried by the upgrade).
        mutating func carry(_ entries: [TetherUpgrade.Entry]) {
            // Each will be claimed: room for all of them at once.
            pending.reserveCapacity(pending.count + entries.count)
            channels.reserveCapacity(channels.count + entries.count)
            subscriptions.reserveCapacity(subscriptions.count + entries.count)
            for entry in entries {
                pending[entry.id] = .carried(channel: entry.channel, resumed: entry.since != nil)
                channels[entry.channel] = Route(carried: entry.id)
                nextWireID = max(nextWireID, entry.id)
            }
        }

        mutating func handle(_ message: ServerMessage) -> [WireAction] {
            switch message {
            case .resumeSet(let token, let resumed, let answers):
                guard case .awaited(let bySet, _) = resumeSet else {
                    return end(WireEnding(.error("the server sent resume_set other than once, first, on version 3"), .retry))
                }
                resumeSet = .issued(token: token)
                var actions: [WireAction]
                if resumed {
                    guard let answered = answerSet(bySet, answers) else {
                        let count = answers?.codes.count ?? 0
                        return end(WireEnding(.error("the server's resume_set does not answer the set: \(bySet.count) members asked for, \(count) answered"), .retry))
                    }
                    actions = answered
                } else {
                    actions = uncarry(bySet)
                }
                for command in gate.open() { actions += perform(command) }
                return actions
            case .ack(let ack):
                if case .authenticating(let authID) = gate.step, ack.id == authID {
                    var actions: [WireAction] = [.ready]
                    for command in gate.open() { actions += perform(command) }
                    return actions
                }
                guard let waiting = pending.removeValue(forKey: ack.id) else { return [] }
                let position = ack.sequence.map(StreamPosition.sequence)
                switch waiting {
                case .subscribe(let subscription, let resumed):
                    return [subscribeAnswered(subscription, resumed: resumed, latest: ack.sequence, gap: ack.gap)]
                case .publish(let request):
                    return [.replied(request, .success(.acknowledged(position: position, payload: nil)))]
                case .ping(let request):
                    return [.replied(request, .success(.acknowledged(position: nil, payload: nil)))]
                case .unsubscribe:
                    return []
                case .carried(let channel, _):
                    // The core dropped it before it asked: the server holds it, so let it go.
                    dropUnclaimed(channel)
                    return sendUnsubscribe(channel)
                }
            case .pong(let id):
                guard case .ping(let request)? = pending.removeValue(forKey: id) else { return [] }
                return [.replied(request, .success(.acknowledged(position: nil, payload: nil)))]
            case .error(let error):
                if case .authenticating(let authID) = gate.step, error.id == authID || error.id == nil {
                    guard error.code == ServerError.unauthorizedCode else {
                        return end(WireEnding(.error("authentication failed: \(error)"), .retry))
                    }
                    return end(WireEnding(DisconnectReason(.credentialsRejected, detail: error.message), .doNotRetry))
                }
                // An error naming no request answers nothing (the core logs it).
                guard let id = error.id, let waiting = pending.removeValue(forKey: id) else { return [] }
                let failure = WireFailure(code: error.code, message: error.message)
                switch waiting {
                case .subscribe(let subscription, _):
                    forget(subscription)
                    return [.subscriptionFailed(subscription, failure)]
                case .publish(let request), .ping(let request):
                    return [.replied(request, .failure(failure))]
                case .unsubscribe:
                    return []
                case .carried(let channel, _):
                    dropUnclaimed(channel)
                    return []
                }
            case .message(let message):
                return delivery(of: message).map { [$0] } ?? []
            }
        }

        package mutating func perform(_ command: WireCommand) -> [WireAction] {
            // Requests go out behind `auth` when the protocol pipelines, not before it; before
            // version 3's first frame only subscribes do (they claim what the upgrade carried).
            let passes: Bool =
                switch (gate.step, command) {
                case (.authenticating?, _): pipelines
                case (.awaitingResumeSet?, .subscribe): true
                default: false
                }
            guard gate.admits(command, passes: passes) else { return [] }
            switch command {
            case .subscribe(let subscription, let topic, let resume):
                // Carried by the upgrade and not claimed yet: its answer is on the way. Claimed in
                // place, in the one lookup (the route keeps the carried id, its request marked).
                if let route = channels.index(forKey: topic.name), let id = channels.values[route].carried, let index = pending.index(forKey: id),
                    case .carried(_, let resumed) = pending.values[index]
                {
                    pending.values[index] = .subscribe(subscription, resumed: resumed)
                    channels.values[route] = Route(subscription: subscription, lastDelivered: resume?.sequence, carried: id)
                    subscriptions[subscription] = topic.name
                    return []
                }
                let id = makeWireID()
                var since: UInt64?
                if let sequence = resume?.sequence { since = sequence }
                channels[topic.name] = Route(subscription: subscription, lastDelivered: since)
                subscriptions[subscription] = topic.name
                pending[id] = .subscribe(subscription, resumed: since != nil)
                return send(.subscribe(id: id, channel: topic.name, since: since)) ?? [.subscriptionFailed(subscription, Self.encodingFailure)]
            case .unsubscribe(let subscription):
                guard let channel = subscriptions[subscription] else { return [] }
                forget(subscription)
                return sendUnsubscribe(channel)
            case .publish(let request, let topic, let data, let key):
                let id = makeWireID()
                pending[id] = .publish(request)
                guard let sent = send(.publish(id: id, channel: topic.name, data: data, key: key)) else {
                    pending[id] = nil
                    return [.replied(request, .failure(Self.encodingFailure))]
                }
                return sent
            case .ping(let request):
                let id = makeWireID()
                pending[id] = .ping(request)
                return send(.ping(id: id)) ?? []
            case .credentials:
                // Credentials go in the handshake: the next connection uses the new token.
                return []
            case .finished:
                return []
            case .presence(let request, _, _):
                return WireAction.presenceUnsupported(request)
            case .goodbye:
                gate.end()
                return []
            }
        }

        package mutating func timerFired(_ timer: WireTimer) -> [WireAction] { [] }

        static let encodingFailure = WireFailure(code: "encoding_failed", message: "the message cannot be encoded within the protocol's limits")

        mutating func makeWireID() -> RequestID {
            nextWireID += 1
            return nextWireID
        }

        mutating func sendUnsubscribe(_ channel: String) -> [WireAction] {
            let id = makeWireID()
            pending[id] = .unsubscribe
            return send(.unsubscribe(id: id, channel: channel)) ?? []
        }

        /// The frame for a message, or nil when the codec refuses it.
        func send(_ message: ClientMessage) -> [WireAction]? {
            guard let frame = try? codec.encode(message) else { return nil }
            return [.send(frame)]
        }

        mutating func end(_ ending: WireEnding) -> [WireAction] {
            gate.end()
            return [.end(ending)]
        }
    }
}

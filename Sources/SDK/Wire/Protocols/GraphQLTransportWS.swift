import ConnectionPolicy

/// graphql-transport-ws (enisdenjo/graphql-ws `PROTOCOL.md`), as Apollo Server, Hasura, Yoga and
/// Strawberry speak it: subprotocol `graphql-transport-ws`; `connection_init` with the
/// credentials in its payload → `connection_ack`; a subscription is a GraphQL subscription
/// operation (the topic's `options`: `{"query", "variables", "operationName"}`); a publish is a
/// mutation whose result is its acknowledgement; `ping`/`pong` is the probe; `complete` ends an
/// operation. No resume: a resubscribe reports `resumeUnsupported` (the app refetches).
package struct GraphQLTransportWS: WireProtocolDescription {
    package static let subprotocol = "graphql-transport-ws"

    /// The `connection_init` payload for a token (default: `{"token": …}`, nothing without one).
    package var initPayload: @Sendable (Secret?) -> JSONValue?

    package init(initPayload: @escaping @Sendable (Secret?) -> JSONValue? = ServerProtocol.tokenPayload) {
        self.initPayload = initPayload
    }

    package var capabilities: WireCapabilities {
        WireCapabilities(publishAcknowledgement: .always, resumesSubscriptions: false, liveness: .clientPing, canProbe: true)
    }

    package func makeMachine() -> Machine { Machine(initPayload: initPayload) }

    package var subprotocols: [String] { [Self.subprotocol] }

    package func makeConnectionMachine() -> any WireMachine { makeMachine() }

    package func ending(code: CloseCode?, reason: String) -> WireEnding { Self.ending(code: code, reason: reason) }

    /// What a close from the server means (the spec's codes, and graphql-ws's client's reading of
    /// them; Strawberry answers a rejected `connection_init` with 4403).
    package static func ending(code: CloseCode?, reason: String) -> WireEnding {
        guard let code else { return WireEnding(DisconnectReason(.networkLost, detail: reason.isEmpty ? nil : reason), .retry) }
        let detail = "code \(code)" + (reason.isEmpty ? "" : ": \(reason)")
        switch code.rawValue {
        case 4403, 4401:
            return WireEnding(DisconnectReason(.credentialsRejected, detail: detail), .doNotRetry)
        case 4400, 4406, 4409, 4429, 4500, 4004, 4005:
            // Fatal in graphql-ws: retrying would repeat the problem (4429 here is "too many
            // initialisation requests", not "try later").
            return WireEnding(.serverClosed(detail), .doNotRetry)
        case 1000, 1001, 1005, 1006, 1012...1014, 4408, 4504:
            return WireEnding(.serverClosed(detail), .retry)
        case 1000..<2000:
            return WireEnding(.serverClosed(detail), .doNotRetry)
        default:
            return WireEnding(.serverClosed(detail), .retry)
        }
    }

    /// One socket's graphql-transport-ws state.
    package struct Machine: WireMachine {
        private enum Step: Hashable, Sendable { case opened, initialising }
        private enum Operation: Hashable {
            case subscription(SubscriptionID, resumed: Bool)
            case publish(RequestID)
        }

        private let initPayload: @Sendable (Secret?) -> JSONValue?
        private var gate = HandshakeGate(Step.opened)
        /// Operation ids are unique while active (a duplicate closes 4409): a counter per socket.
        private var nextOperation: UInt64 = 0
        private var operations: [String: Operation] = [:]
        private var subscriptions: [SubscriptionID: String] = [:]
        /// A mutation's result, until its `complete`.
        private var results: [String: JSONValue] = [:]
        /// Probes waiting for a pong, oldest first.
        private var probes: [RequestID] = []

        init(initPayload: @escaping @Sendable (Secret?) -> JSONValue?) {
            self.initPayload = initPayload
        }

        package mutating func start(credentials: Secret?) -> [WireAction] {
            guard gate.step == .opened else { return [] }
            gate.advance(to: .initialising)
            var message: [String: JSONValue] = ["type": "connection_init"]
            if let payload = initPayload(credentials) { message["payload"] = payload }
            return [send(message)]
        }

        package mutating func receive(_ frame: TransportFrame) -> [WireAction] {
            guard !gate.isEnded else { return [] }
            guard case .text(let text) = frame, let value = try? JSONParser.parse(text, maxDepth: 64), let type = value["type"]?.stringValue else {
                return fail("not a graphql-transport-ws message")
            }
            let id = value["id"]?.stringValue
            switch type {
            case "connection_ack":
                guard gate.step == .initialising else { return fail("a second connection_ack") }
                var actions: [WireAction] = [.ready]
                // What came before the `connection_ack` (sending it then would close 4401).
                for command in gate.open() { actions += perform(command) }
                return actions
            case "ping":
                var pong: [String: JSONValue] = ["type": "pong"]
                if let payload = value["payload"] { pong["payload"] = payload }
                return [send(pong)]
            case "pong":
                guard !probes.isEmpty else { return [] }
                return [.replied(probes.removeFirst(), .success(.acknowledged(position: nil, payload: value["payload"])))]
            case "next":
                guard let id, let operation = operations[id] else { return [] }
                let payload = value["payload"] ?? .null
                switch operation {
                case .subscription(let subscription, _):
                    return [.delivery(subscription, payload, position: nil)]
                case .publish:
                    results[id] = payload
                    return []
                }
            case "error":
                guard let id, let operation = operations.removeValue(forKey: id) else { return [] }
                let failure = WireFailure(code: "graphql_error", message: Self.errorMessage(value["payload"]), payload: value["payload"])
                switch operation {
                case .subscription(let subscription, _):
                    subscriptions[subscription] = nil
                    return [.subscriptionFailed(subscription, failure)]
                case .publish(let request):
                    results[id] = nil
                    return [.replied(request, .failure(failure))]
                }
            case "complete":
                guard let id, let operation = operations.removeValue(forKey: id) else { return [] }
                switch operation {
                case .subscription(let subscription, _):
                    subscriptions[subscription] = nil
                    return [.subscriptionEnded(subscription, reason: "the server completed the subscription")]
                case .publish(let request):
                    let result = results.removeValue(forKey: id)
                    // An execution error (the resolver failed) comes as a `next` with `errors`,
                    // not as `error` (which is for validation): the mutation was not done as asked.
                    if let errors = result?["errors"]?.arrayValue, !errors.isEmpty {
                        return [.replied(request, .failure(WireFailure(code: "graphql_error", message: Self.errorMessage(.array(errors)), payload: result)))]
                    }
                    return [.replied(request, .success(.acknowledged(position: nil, payload: result)))]
                }
            default:
                return fail("unknown message type '\(type.prefix(40))'")
            }
        }

        package mutating func perform(_ command: WireCommand) -> [WireAction] {
            guard gate.admits(command) else { return [] }
            switch command {
            case .subscribe(let subscription, let topic, let resume):
                if let old = subscriptions[subscription] { operations[old] = nil }
                let id = makeOperationID("s")
                operations[id] = .subscription(subscription, resumed: resume != nil)
                subscriptions[subscription] = id
                // There is no subscribe acknowledgement: the operation runs once sent. A resume
                // cannot be asked for, so a resubscribe's gap is unknown.
                return [send(["id": .string(id), "type": "subscribe", "payload": Self.operation(topic.options)]),
                        .subscribed(subscription, resume == nil ? .live(at: nil) : .resumeUnsupported)]
            case .unsubscribe(let subscription):
                guard let id = subscriptions.removeValue(forKey: subscription) else { return [] }
                operations[id] = nil
                return [send(["id": .string(id), "type": "complete"])]
            case .publish(let request, _, let data, _):
                let id = makeOperationID("p")
                operations[id] = .publish(request)
                return [send(["id": .string(id), "type": "subscribe", "payload": Self.operation(data)])]
            case .ping(let request):
                probes.append(request)
                return [send(["type": "ping"])]
            case .credentials:
                // Credentials go in the handshake: the next connection uses the new token.
                return []
            case .finished:
                return []
            case .presence(let request, _, _):
                return WireAction.presenceUnsupported(request)
            case .goodbye:
                gate.end()
                return subscriptions.values.sorted().map { send(["id": .string($0), "type": "complete"]) }
            }
        }

        package mutating func timerFired(_ timer: WireTimer) -> [WireAction] { [] }

        private mutating func makeOperationID(_ prefix: String) -> String {
            nextOperation += 1
            return prefix + String(nextOperation)
        }

        /// The server broke the protocol: the client closes with 4400 and retries (a server bug
        /// is not the client's to repeat, but it may be fixed by a redeploy).
        private mutating func fail(_ message: String) -> [WireAction] {
            gate.end()
            return [.end(WireEnding(.error("graphql-transport-ws: \(message)"), .retry, closeCode: CloseCode(4400)))]
        }

        private func send(_ message: [String: JSONValue]) -> WireAction {
            .send(.text(JSONWriter.text(.object(message))))
        }

        /// A GraphQL operation payload: `{"query", "variables"?, "operationName"?}` from a topic's
        /// options (a bare string is the query).
        private static func operation(_ options: JSONValue?) -> JSONValue {
            switch options {
            case .string(let query)?: return ["query": .string(query)]
            case .object(let members)?: return .object(members.filter { ["query", "variables", "operationName", "extensions"].contains($0.key) })
            default: return ["query": ""]
            }
        }

        private static func errorMessage(_ payload: JSONValue?) -> String {
            let messages = payload?.arrayValue?.compactMap { $0["message"]?.stringValue } ?? []
            return messages.isEmpty ? "the operation failed" : messages.joined(separator: "; ")
        }
    }
}

package import ConnectionPolicy
package import Foundation

// The shape every protocol adapter has (issue 10; see docs/ARCHITECTURE.md): a stateless
// description chosen once, and a pure per-connection machine made fresh for every socket. The
// machine reads no clock, starts no task and does no I/O: frames, the core's commands and timer
// fires go in; actions come out. `package` until the session core drives adapters through it.

/// Identifies one of the app's subscriptions, for the life of the session (across sockets).
package typealias SubscriptionID = UInt64

/// Where a subscription's stream stands, in the protocol's own terms.
package enum StreamPosition: Hashable, Sendable {
    /// A per-channel sequence number (Tether).
    case sequence(UInt64)
    /// A position only the protocol understands (an app cursor, an opaque offset).
    case opaque(String)
}

/// What a (re)subscription covered. Positions are the stream's latest when the server said
/// (Tether's `ok` `seq`), so the core knows where a catch-up ends and where to resume next.
package enum SubscribeOutcome: Hashable, Sendable {
    /// Subscribed; nothing was asked to be caught up (or the stream starts now).
    case live(at: StreamPosition?)
    /// Every message after the resume position follows (or followed), up to `to`.
    case caughtUp(to: StreamPosition?)
    /// The server no longer had every message after the resume position.
    case gap(at: StreamPosition?)
    /// The protocol cannot resume: what was published meanwhile is unknown — refetch.
    case resumeUnsupported
}

/// A request's or a subscription's failure, as the protocol reported it.
package struct WireFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// A machine-readable code when the protocol has one.
    package var code: String
    package var message: String
    /// The server's payload, when it sent one (GraphQL errors, a Socket.IO ack).
    package var payload: JSONValue?

    package init(code: String, message: String, payload: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.payload = payload
    }

    package var description: String { "\(code): \(message)" }
}

/// How a request ended on the wire.
package enum WireReply: Hashable, Sendable {
    /// The server acknowledged it; `position` is the message's, where the protocol gives one,
    /// and `payload` the server's answer (a mutation's result, an ack's arguments).
    case acknowledged(position: StreamPosition?, payload: JSONValue?)
    /// Sent; the protocol has no acknowledgement for it (never a pretended ack).
    case sentUnconfirmed
}

/// A timer an adapter asks the core to arm (a server-heartbeat watchdog, …).
package struct WireTimer: Hashable, Sendable, CustomStringConvertible {
    package var name: String

    package init(_ name: String) { self.name = name }

    package var description: String { name }
}

/// What the end of a connection means: why, and whether to retry.
package struct WireEnding: Hashable, Sendable {
    package var reason: DisconnectReason
    package var disposition: RetryDisposition
    /// The close code the client sends, when it is the client that ends the connection.
    package var closeCode: CloseCode

    package init(_ reason: DisconnectReason, _ disposition: RetryDisposition, closeCode: CloseCode = .normal) {
        self.reason = reason
        self.disposition = disposition
        self.closeCode = closeCode
    }
}

/// A subscription the core will resubscribe on the next socket, and where it resumes.
package struct WireResume: Hashable, Sendable {
    package var topic: Topic
    package var position: StreamPosition?

    package init(topic: Topic, position: StreamPosition?) {
        self.topic = topic
        self.position = position
    }
}

/// What the core asks of a connection.
package enum WireCommand: Hashable, Sendable {
    case subscribe(SubscriptionID, Topic, resume: StreamPosition?)
    case unsubscribe(SubscriptionID)
    /// `key`: the publish's idempotency key, kept by the core across sockets (protocols that
    /// have no such thing ignore it).
    case publish(RequestID, Topic, JSONValue, key: String?)
    /// Elicit an answer now (only when the protocol can: see ``WireCapabilities/canProbe``).
    case ping(RequestID)
    /// An orderly goodbye in the protocol's terms, before the core closes the socket.
    case goodbye
}

/// What a connection asks the core to do, in order.
package enum WireAction: Hashable, Sendable {
    case send(TransportFrame)
    /// The handshake is done: the core may subscribe and publish.
    case ready
    /// The server takes requests now, ahead of the handshake's answer (it handles a
    /// connection's frames in order and applies none behind credentials it rejects): the core
    /// may send its replay and outbox in the same flight. The status waits for ``ready``.
    case pipelining
    case subscribed(SubscriptionID, SubscribeOutcome)
    case subscriptionFailed(SubscriptionID, WireFailure)
    /// The server ended a subscription (a GraphQL `complete`).
    case subscriptionEnded(SubscriptionID, reason: String)
    case delivery(SubscriptionID, JSONValue, position: StreamPosition?)
    case replied(RequestID, Result<WireReply, WireFailure>)
    case arm(WireTimer, after: Duration)
    case cancel(WireTimer)
    /// The connection must end now, for this reason and with this disposition.
    case end(WireEnding)
}

/// What a protocol can do, so the core adapts instead of pretending.
package struct WireCapabilities: Hashable, Sendable {
    package enum PublishAcknowledgement: Hashable, Sendable { case always, optional, none }
    package enum Liveness: Hashable, Sendable { case clientPing, serverPing, both }

    package var publishAcknowledgement: PublishAcknowledgement
    /// Indicates that a resubscribe can ask for what was missed.
    package var resumesSubscriptions: Bool
    package var liveness: Liveness
    /// Indicates that the client can elicit an answer now (the foreground probe, `ping()`).
    package var canProbe: Bool
    /// Indicates that a publish whose acknowledgement was lost with the connection is sent again
    /// (with its idempotency key): the server applies the key at most once (Tether), or
    /// re-sending is the protocol's own rule (MQTT QoS 1: at least once, the re-send marked DUP
    /// with its packet id).
    package var deduplicatesPublishes: Bool

    package init(publishAcknowledgement: PublishAcknowledgement, resumesSubscriptions: Bool, liveness: Liveness, canProbe: Bool, deduplicatesPublishes: Bool = false) {
        self.publishAcknowledgement = publishAcknowledgement
        self.resumesSubscriptions = resumesSubscriptions
        self.liveness = liveness
        self.canProbe = canProbe
        self.deduplicatesPublishes = deduplicatesPublishes
    }
}

/// How one attempt opens its socket.
package struct Handshake: Hashable, Sendable {
    package var url: URL
    package var headers: [String: String]
    /// The WebSocket subprotocols to offer, in preference order (the server must choose one).
    package var subprotocols: [String]
    /// Values that must never be shown: credentials the protocol put in the URL.
    package var secrets: [String]
    /// Whether the server must choose one of ``subprotocols`` (false: they are an offer, and a
    /// server that chooses none speaks the protocol's first version).
    package var requiresSubprotocol: Bool
    /// The subscriptions the request itself carries (Tether version 2), by the wire id the
    /// server answers them with.
    package var carried: [TetherUpgrade.Entry]

    package init(
        url: URL, headers: [String: String] = [:], subprotocols: [String] = [], secrets: [String] = [],
        requiresSubprotocol: Bool = true, carried: [TetherUpgrade.Entry] = []
    ) {
        self.url = url
        self.headers = headers
        self.subprotocols = subprotocols
        self.secrets = secrets
        self.requiresSubprotocol = requiresSubprotocol
        self.carried = carried
    }

    /// `text` with every secret replaced by `<redacted>` (also percent-encoded, as a URL holds it).
    package func redacted(_ text: String) -> String {
        var text = text
        for secret in secrets where !secret.isEmpty {
            text = text.replacingOccurrences(of: secret, with: "<redacted>")
            if let encoded = secret.addingPercentEncoding(withAllowedCharacters: .urlUnreserved), encoded != secret {
                text = text.replacingOccurrences(of: encoded, with: "<redacted>")
            }
        }
        return text
    }

    /// `error` with every secret redacted from what it says.
    package func redacted(_ error: any Error) -> any Error {
        guard !secrets.isEmpty else { return error }
        if let error = error as? TransportError {
            return TransportError(error.code, redacted(error.message), httpStatus: error.httpStatus)
        }
        let text = String(describing: error)
        let clean = redacted(text)
        return clean == text ? error : TransportError(.connectionFailed, clean)
    }
}

/// A protocol, chosen once in the settings: stateless. It makes a fresh machine for every socket
/// and says what the end of a connection means.
package protocol WireProtocolDescription: Sendable {
    var capabilities: WireCapabilities { get }
    /// The WebSocket subprotocols to offer, in preference order.
    var subprotocols: [String] { get }
    /// How an attempt opens its socket to `endpoint` (the settings' URL) with `credentials`
    /// (default: the URL as it is, offering ``subprotocols``; credentials go in the first
    /// message).
    func handshake(endpoint: URL, credentials: Secret?) -> Handshake
    /// How an attempt opens its socket when the core would resubscribe `resuming` (in order)
    /// right after the handshake: a protocol that can carry them in the upgrade request does
    /// (default: ``handshake(endpoint:credentials:)``).
    func handshake(endpoint: URL, credentials: Secret?, resuming: [WireResume]) -> Handshake
    func makeConnectionMachine() -> any WireMachine
    /// A machine for a socket opened with `handshake`, on which the server chose `subprotocol`
    /// (default: ``makeConnectionMachine(continuing:)``).
    func makeConnectionMachine(continuing state: (any Sendable)?, handshake: Handshake, subprotocol: String?) -> any WireMachine
    /// A machine for the next socket of a session, continuing from `state`: what the previous
    /// socket's machine left in ``WireMachine/sessionState`` (nil for a session's first socket).
    /// Default: a fresh machine, for protocols whose state is all per socket.
    func makeConnectionMachine(continuing state: (any Sendable)?) -> any WireMachine
    /// What a close from the server (or a socket that ended without one: `code` nil) means.
    func ending(code: CloseCode?, reason: String) -> WireEnding
    /// What an upgrade the server refused with `httpStatus` means (default: 401 and 403 reject
    /// the credentials; 408, 429 and 5xx are passing; any other 4xx is a configuration the
    /// client cannot fix by retrying).
    func ending(httpStatus: Int) -> WireEnding
    /// What is wrong with how the app configured this protocol, if anything (checked by
    /// `AppSettings.Builder.build()`; default: nothing).
    var settingsProblem: String? { get }
    /// Why publishing `data` to `channel` (with idempotency key `key`) cannot be put on this
    /// protocol's wire, checked before the publish is queued (default: nothing; a machine may
    /// still refuse it when it is sent, with a failure reply).
    func encodingProblem(publishing data: JSONValue, to channel: String, key: String) -> String?
}

extension WireProtocolDescription {
    package var settingsProblem: String? { nil }

    package func encodingProblem(publishing data: JSONValue, to channel: String, key: String) -> String? { nil }

    package func makeConnectionMachine(continuing state: (any Sendable)?) -> any WireMachine {
        makeConnectionMachine()
    }

    package func handshake(endpoint: URL, credentials: Secret?) -> Handshake {
        Handshake(url: endpoint, subprotocols: subprotocols)
    }

    package func handshake(endpoint: URL, credentials: Secret?, resuming: [WireResume]) -> Handshake {
        handshake(endpoint: endpoint, credentials: credentials)
    }

    package func makeConnectionMachine(continuing state: (any Sendable)?, handshake: Handshake, subprotocol: String?) -> any WireMachine {
        makeConnectionMachine(continuing: state)
    }

    package func ending(httpStatus: Int) -> WireEnding {
        let detail = "the server refused the WebSocket upgrade with HTTP \(httpStatus)"
        switch httpStatus {
        case 401, 403: return WireEnding(DisconnectReason(.credentialsRejected, detail: detail), .doNotRetry)
        case 408, 429, 500...599: return WireEnding(.error(detail), .retry)
        case 400...499: return WireEnding(.error(detail), .doNotRetry)
        default: return WireEnding(.error(detail), .retry)
        }
    }
}

/// Commands that came before a connection was ready, in order: a machine performs them once it
/// is (sending them earlier would break the protocol — graphql-transport-ws closes 4401).
package struct HeldCommands: Sendable {
    private var commands: [WireCommand] = []

    package init() {}

    /// Holds `command` until the handshake is done; a goodbye before then has nothing to say.
    package mutating func hold(_ command: WireCommand) {
        if case .goodbye = command { return }
        commands.append(command)
    }

    /// The held commands, oldest first; none are held afterwards.
    package mutating func release() -> [WireCommand] {
        defer { commands = [] }
        return commands
    }
}

/// One socket's protocol state machine. Pure: made fresh for every socket, never reused.
package protocol WireMachine: Sendable {
    /// The socket is open: what to send first (the credentials, for a client-first protocol).
    mutating func start(credentials: Secret?) -> [WireAction]
    /// A frame arrived (it may hold any number of messages, or part of one).
    mutating func receive(_ frame: TransportFrame) -> [WireAction]
    /// The frames of one read, in order: what ``receive(_:)`` answers for each, in order, in
    /// one array. Default: ``receive(_:)`` frame by frame. The core carries the actions out
    /// after the last frame; nothing a machine decides for one frame depends on what the core
    /// does with the actions of an earlier frame of the same read (it answers frames already
    /// received, and its commands only add requests to be answered later).
    mutating func receive(contentsOf frames: [TransportFrame]) -> [WireAction]
    mutating func perform(_ command: WireCommand) -> [WireAction]
    mutating func timerFired(_ timer: WireTimer) -> [WireAction]
    /// State the protocol keeps for the session rather than for one socket (MQTT's client id,
    /// its un-acknowledged publishes, the subscriptions the broker holds): the core takes it when
    /// the socket ends and hands it to the next socket's machine
    /// (``WireProtocolDescription/makeConnectionMachine(continuing:)``). Default: none.
    var sessionState: (any Sendable)? { get }
}

extension WireMachine {
    package var sessionState: (any Sendable)? { nil }

    package mutating func receive(contentsOf frames: [TransportFrame]) -> [WireAction] {
        var actions: [WireAction] = []
        for frame in frames { actions += receive(frame) }
        return actions
    }
}

extension CharacterSet {
    /// RFC 3986's unreserved characters: what a query value may hold unencoded.
    static let urlUnreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}

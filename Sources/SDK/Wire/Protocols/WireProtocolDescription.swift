import ConnectionPolicy
package import Foundation

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
    /// right after the handshake, `state` being what the last socket's machine left
    /// (``WireMachine/sessionState``): a protocol that can carry them in the upgrade request does
    /// (default: ``handshake(endpoint:credentials:)``).
    func handshake(endpoint: URL, credentials: Secret?, resuming: [WireResume], continuing state: WireSessionState?) -> Handshake
    func makeConnectionMachine() -> any WireMachine
    /// A machine for a socket opened with `handshake`, on which the server chose `subprotocol`
    /// (default: ``makeConnectionMachine(continuing:)``).
    func makeConnectionMachine(continuing state: WireSessionState?, handshake: Handshake, subprotocol: String?) -> any WireMachine
    /// A machine for the next socket of a session, continuing from `state`: what the previous
    /// socket's machine left in ``WireMachine/sessionState`` (nil for a session's first socket).
    /// Default: a fresh machine, for protocols whose state is all per socket.
    func makeConnectionMachine(continuing state: WireSessionState?) -> any WireMachine
    /// What a close from the server (or a socket that ended without one: `code` nil) means.
    func ending(code: CloseCode?, reason: String) -> WireEnding
    /// What an upgrade the server refused with `httpStatus` means (default: 401 and 403 reject
    /// the credentials; 408, 429 and 5xx are passing; any other 4xx is a configuration the
    /// client cannot fix by retrying).
    func ending(httpStatus: Int) -> WireEnding
    /// The same, for the `refusalsInARow`-th attempt in a row the server refused (1 for the
    /// first): a protocol whose servers refuse for passing causes too can retry a few times
    /// (default: ``ending(httpStatus:)``).
    func ending(httpStatus: Int, refusalsInARow: Int) -> WireEnding
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

    package func makeConnectionMachine(continuing state: WireSessionState?) -> any WireMachine {
        makeConnectionMachine()
    }

    package func handshake(endpoint: URL, credentials: Secret?) -> Handshake {
        Handshake(url: endpoint, subprotocols: subprotocols)
    }

    package func handshake(endpoint: URL, credentials: Secret?, resuming: [WireResume], continuing state: WireSessionState?) -> Handshake {
        handshake(endpoint: endpoint, credentials: credentials)
    }

    /// The handshake for a session's first socket (no state to continue from).
    package func handshake(endpoint: URL, credentials: Secret?, resuming: [WireResume]) -> Handshake {
        handshake(endpoint: endpoint, credentials: credentials, resuming: resuming, continuing: nil)
    }

    package func makeConnectionMachine(continuing state: WireSessionState?, handshake: Handshake, subprotocol: String?) -> any WireMachine {
        makeConnectionMachine(continuing: state)
    }

    package func ending(httpStatus: Int) -> WireEnding {
        Self.standardEnding(httpStatus: httpStatus)
    }

    package func ending(httpStatus: Int, refusalsInARow: Int) -> WireEnding {
        ending(httpStatus: httpStatus)
    }

    /// The default reading of a refused upgrade (see ``ending(httpStatus:)``), for a protocol
    /// that reads some statuses its own way and the rest as every protocol does.
    package static func standardEnding(httpStatus: Int) -> WireEnding {
        let detail = "the server refused the WebSocket upgrade with HTTP \(httpStatus)"
        switch httpStatus {
        case 401, 403: return WireEnding(DisconnectReason(.credentialsRejected, detail: detail), .doNotRetry)
        case 408, 429, 500...599: return WireEnding(.error(detail), .retry)
        case 400...499: return WireEnding(.error(detail), .doNotRetry)
        default: return WireEnding(.error(detail), .retry)
        }
    }
}

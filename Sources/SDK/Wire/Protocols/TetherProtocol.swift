import ConnectionPolicy
package import Foundation

/// Tether's own protocol (`docs/PROTOCOL.md`) as an adapter: `auth` first, per-channel
/// sequence numbers so a resubscribe asks `since` the last one delivered (`ok` with `seq` and
/// `gap`), publishes acknowledged with their number and carrying an idempotency key, `ping`
/// answered `pong`, and close codes that say fatal, transient or retry-after.
package struct TetherProtocol: WireProtocolDescription {
    package var codec: any WireCodec
    package var handshakeMode: TetherHandshake

    package init(codec: any WireCodec = JSONWireCodec(), handshake: TetherHandshake = .resumeInUpgrade) {
        self.codec = codec
        self.handshakeMode = handshake
    }

    package var subprotocols: [String] { [] }

    /// A publish the codec cannot encode within its limits (too large, too deep, not finite).
    package func encodingProblem(publishing data: JSONValue, to channel: String, key: String) -> String? {
        do {
            _ = try codec.encode(ClientMessage.publish(id: .max, channel: channel, data: data, key: key))
            return nil
        } catch {
            return error.description
        }
    }

    package func makeConnectionMachine() -> any WireMachine { makeMachine() }

    /// Version 2 (``TetherUpgrade``) offered, when the mode asks for it and the token can be a
    /// header value: the credentials in `Authorization`, the subscriptions in `Tether-Resume`
    /// when they fit (``TetherUpgrade/maxResumeHeaderBytes``; otherwise none, and they go in
    /// frames right after the 101). Version 1 otherwise: the URL as it is, nothing in headers.
    package func handshake(endpoint: URL, credentials: Secret?, resuming: [WireResume]) -> Handshake {
        guard handshakeMode == .resumeInUpgrade else { return Handshake(url: endpoint) }
        var headers: [String: String] = [:]
        if let credentials {
            guard let authorization = TetherUpgrade.authorization(credentials) else { return Handshake(url: endpoint) }
            headers[TetherUpgrade.authorizationHeader] = authorization
        }
        var carried = resuming
        let value = TetherUpgrade.encode(Self.entries(carried))
        if value.utf8.count > TetherUpgrade.maxResumeHeaderBytes { carried = [] }
        if !carried.isEmpty { headers[TetherUpgrade.resumeHeader] = value }
        return Handshake(url: endpoint, headers: headers, subprotocols: [TetherUpgrade.subprotocol], requiresSubprotocol: false, carried: carried)
    }

    package func makeConnectionMachine(continuing state: WireSessionState?, handshake: Handshake, subprotocol: String?) -> any WireMachine {
        guard subprotocol == TetherUpgrade.subprotocol else { return makeMachine() }
        return Machine(codec: codec, pipelines: true, upgraded: Self.entries(handshake.carried))
    }

    /// The upgrade's entries for the subscriptions it carries: wire ids 1…N answer them, in
    /// order (the machine numbers on from N + 1).
    static func entries(_ carried: [WireResume]) -> [TetherUpgrade.Entry] {
        carried.enumerated().map { index, resume in
            TetherUpgrade.Entry(id: RequestID(index + 1), channel: resume.topic.name, since: resume.position?.sequence)
        }
    }

    package func ending(code: CloseCode?, reason: String) -> WireEnding { Self.ending(code: code, reason: reason) }

    package var capabilities: WireCapabilities {
        var capabilities = WireCapabilities(publishAcknowledgement: .always, resumesSubscriptions: true, liveness: .clientPing, canProbe: true, deduplicatesPublishes: true)
        capabilities.catchesUpSubscribers = true
        return capabilities
    }

    /// A version-1 machine (`auth` first).
    package func makeMachine() -> Machine { Machine(codec: codec, pipelines: handshakeMode != .afterAuthentication, upgraded: nil) }

    /// What a close from the server means (the table in `docs/PROTOCOL.md`).
    package static func ending(code: CloseCode?, reason: String) -> WireEnding {
        guard let code else { return WireEnding(DisconnectReason(.networkLost, detail: reason.isEmpty ? nil : reason), .retry) }
        if code == .unauthorized {
            return WireEnding(DisconnectReason(.credentialsRejected, detail: reason.isEmpty ? nil : reason), .doNotRetry)
        }
        return WireEnding(.serverClosed("code \(code)" + (reason.isEmpty ? "" : ": \(reason)")), disposition(of: code, reason: reason))
    }

    /// What a close with `code` and `reason` says about retrying, on Tether's protocol.
    package static func disposition(of code: CloseCode, reason: String) -> RetryDisposition {
        switch code {
        case .unauthorized, .forbidden, .badRequest: return .doNotRetry
        case .retryAfter:
            guard let milliseconds = CloseCode.retryAfterMilliseconds(in: reason) else { return .retry }
            return .retryAfter(.milliseconds(milliseconds))
        default: return .retry
        }
    }
}

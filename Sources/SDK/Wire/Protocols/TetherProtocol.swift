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

    /// Versions 3 and 2 offered (``TetherResumeSet``, ``TetherUpgrade``), when the mode asks for
    /// it and the token can be a header value: the credentials in `Authorization`; the
    /// subscriptions of the last version-3 connection by its token, with their positions, in
    /// `Tether-Resume-Set` (when `state` holds one and it fits
    /// ``TetherResumeSet/maxHeaderBytes``); the others by name in `Tether-Resume` when they fit
    /// (``TetherUpgrade/maxResumeHeaderBytes``; otherwise none, and they go in frames right
    /// after the 101). Version 1 otherwise: the URL as it is, nothing in headers.
    package func handshake(endpoint: URL, credentials: Secret?, resuming: [WireResume], continuing state: WireSessionState?) -> Handshake {
        guard handshakeMode == .resumeInUpgrade else { return Handshake(url: endpoint) }
        var headers: [String: String] = [:]
        if let credentials {
            guard let authorization = TetherUpgrade.authorization(credentials) else { return Handshake(url: endpoint) }
            headers[TetherUpgrade.authorizationHeader] = authorization
        }
        var bySet: [WireResume] = []
        var byName = resuming
        if let kept = continuing(state, as: TetherSessionState.self), let set = Self.resumeSet(kept, resuming: resuming) {
            headers[TetherResumeSet.header] = set.value
            bySet = set.carried
            byName = set.rest
        }
        let value = TetherUpgrade.encode(Self.entries(byName, after: bySet.count))
        if value.utf8.count > TetherUpgrade.maxResumeHeaderBytes { byName = [] }
        if !byName.isEmpty { headers[TetherUpgrade.resumeHeader] = value }
        return Handshake(
            url: endpoint, headers: headers, subprotocols: [TetherResumeSet.subprotocol, TetherUpgrade.subprotocol], requiresSubprotocol: false,
            carried: bySet + byName, tentativelyCarried: bySet.count
        )
    }

    /// The `Tether-Resume-Set` value for the kept set, the subscriptions it carries (in its
    /// order) and the rest of `resuming` (in theirs); nil when it carries none or does not fit.
    static func resumeSet(_ kept: TetherSessionState, resuming: [WireResume]) -> (value: String, carried: [WireResume], rest: [WireResume])? {
        // Each wanted channel's index in `resuming`: one hash each way, and no resume copied
        // into a table (a thousand at every reconnect).
        var wanted: [String: Int] = [:]
        wanted.reserveCapacity(resuming.count)
        // Read in place, by index (each `enumerated()` element was a copy of the resume).
        for index in resuming.indices { wanted[resuming[index].topic.name] = index }
        var taken = [Bool](repeating: false, count: resuming.count)
        var positions: [TetherResumeSet.Position] = []
        var carried: [WireResume] = []
        positions.reserveCapacity(kept.members.count)
        carried.reserveCapacity(min(kept.members.count, resuming.count))
        for member in kept.members {
            guard let index = wanted[member.channel], !taken[index] else {
                positions.append(.left)
                continue
            }
            taken[index] = true
            positions.append(resuming[index].position?.sequence.map(TetherResumeSet.Position.since) ?? .live)
            carried.append(resuming[index])
        }
        guard !carried.isEmpty, let request = TetherResumeSet.Request(token: kept.token, members: kept.members, digest: kept.digest, positions: positions) else { return nil }
        let value = request.headerValue
        guard value.utf8.count <= TetherResumeSet.maxHeaderBytes else { return nil }
        var rest: [WireResume] = []
        rest.reserveCapacity(resuming.count - carried.count)
        for index in resuming.indices where !taken[index] { rest.append(resuming[index]) }
        return (value, carried, rest)
    }

    package func makeConnectionMachine(continuing state: WireSessionState?, handshake: Handshake, subprotocol: String?) -> any WireMachine {
        let tentative = handshake.tentativelyCarried
        let byName = Self.entries(handshake.carried.dropFirst(tentative), after: tentative)
        switch subprotocol {
        case TetherResumeSet.subprotocol?:
            let bySet = Self.entries(handshake.carried.prefix(tentative), after: 0)
            return Machine(codec: codec, pipelines: true, upgraded: byName, resumeSet: .awaited(bySet, kept: state))
        case TetherUpgrade.subprotocol?:
            return Machine(codec: codec, pipelines: true, upgraded: byName)
        default:
            return makeMachine()
        }
    }

    /// The upgrade's entries for the subscriptions it carries: wire ids `after` + 1 … answer
    /// them, in order (the machine numbers on from the last).
    /// (A slice of the handshake's list: not copied into an array of its own first.)
    static func entries(_ carried: some Collection<WireResume>, after first: Int = 0) -> [TetherUpgrade.Entry] {
        var entries: [TetherUpgrade.Entry] = []
        entries.reserveCapacity(carried.count)
        for resume in carried {
            entries.append(TetherUpgrade.Entry(id: RequestID(first + entries.count + 1), channel: resume.topic.name, since: resume.position?.sequence))
        }
        return entries
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

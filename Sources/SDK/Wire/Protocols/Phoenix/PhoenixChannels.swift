import ConnectionPolicy
package import Foundation

/// Phoenix Channels with the V2 serializer (`vsn=2.0.0`), as a Phoenix 1.7 server speaks it
/// (`../shared/research/phoenix-transcripts.md`), and Supabase Realtime on top of it.
///
/// There is no handshake message: the server authorizes the HTTP upgrade (`connect/3`), and
/// refuses it with a bare 403 for a wrong token, a missing one and an unknown `vsn` alike; an
/// open socket is ready. A subscription is a topic joined with `phx_join` (a fresh `join_ref`
/// each time; messages of an earlier join are dropped); a publish is a push answered by
/// `phx_reply` when the channel replies, else "sent, not confirmed" after ``replyTimeout``. The
/// server never pings: the client's heartbeat (topic `phoenix`) keeps the socket alive and is the
/// probe. Phoenix has no resume: every rejoin after a reconnect is reported as refetch (Supabase's
/// private channels can replay broadcasts: see ``Supabase``).
package struct PhoenixChannels: WireProtocolDescription {
    /// The heartbeat the machine sends when nothing else did for ``keepAlive``.
    package static let keepAliveTimer = WireTimer("phoenix-keepalive")
    /// The longest a stretched keep-alive goes (`Liveness.keepAliveStretch`): Phoenix closes a
    /// socket silent for 60 s.
    package static let longestStretchedKeepAlive = Duration.seconds(50)
    /// Supabase: ask the token provider before the token in use expires.
    package static let tokenTimer = WireTimer("supabase-token-refresh")
    package static let version = "2.0.0"

    /// Supabase Realtime's layer: the project key in the URL, the user's token in every join and
    /// pushed when it changes, `realtime:` topics, broadcasts as the publish, replay on private
    /// channels.
    package struct Supabase: Sendable {
        /// The project's API key (the anon key), sent as `apikey` in the URL.
        package var apiKey: String
        /// The wall clock, Unix milliseconds: when a replayable broadcast was received (its
        /// position; a replay asks from the last one). The device's clock, not the server's.
        package var now: @Sendable () -> Int64
        /// How far before the last broadcast a replay asks from, against the two clocks'
        /// difference (what comes twice is dropped by its id).
        package var replayMargin: Duration

        package init(apiKey: String, replayMargin: Duration = .seconds(60), now: @escaping @Sendable () -> Int64 = Supabase.wallClock) {
            self.apiKey = apiKey
            self.replayMargin = replayMargin
            self.now = now
        }

        @Sendable package static func wallClock() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
    }

    package var params: [String: String]
    package var credentials: PhoenixCredentials
    package var keepAlive: Duration
    package var replyTimeout: Duration
    package var supabase: Supabase?

    package init(
        params: [String: String] = [:], credentials: PhoenixCredentials = .queryItem("token"), keepAlive: Duration = .seconds(30),
        replyTimeout: Duration = .seconds(5), supabase: Supabase? = nil
    ) {
        self.params = params
        self.credentials = credentials
        self.keepAlive = keepAlive
        self.replyTimeout = replyTimeout
        self.supabase = supabase
    }

    package var capabilities: WireCapabilities {
        var capabilities = WireCapabilities(
            publishAcknowledgement: .optional, resumesSubscriptions: supabase != nil, liveness: .clientPing, canProbe: true, tracksPresence: supabase != nil
        )
        // The ids of what was delivered, with their positions: what a relaunch's replay is judged by.
        capabilities.sessionStateTracksDeliveries = supabase != nil
        return capabilities
    }

    package var subprotocols: [String] { [] }

    package func makeMachine() -> Machine { Machine(configuration: self, continuing: nil) }

    package func makeConnectionMachine() -> any WireMachine { makeMachine() }

    package func makeConnectionMachine(continuing state: WireSessionState?) -> any WireMachine {
        Machine(configuration: self, continuing: continuing(state, as: PhoenixSessionState.self))
    }

    /// The socket's path (`/socket/websocket` for a bare host, Supabase's `/realtime/v1/websocket`;
    /// `/websocket` added to a path that lacks it), `vsn`, the app's params and the credentials.
    package func handshake(endpoint: URL, credentials token: Secret?) -> Handshake {
        guard var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false) else { return Handshake(url: endpoint) }
        if components.path.isEmpty || components.path == "/" {
            components.path = supabase == nil ? "/socket/websocket" : "/realtime/v1/websocket"
        } else if !components.path.hasSuffix("/websocket") {
            components.path = (components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path) + "/websocket"
        }
        var items: [(String, String)] = []
        var secrets: [String] = []
        if let supabase {
            items.append(("apikey", supabase.apiKey))
            secrets.append(supabase.apiKey)
        }
        items.append(("vsn", Self.version))
        items += params.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        var subprotocols: [String] = []
        switch credentials {
        case .queryItem(let name):
            if let token, supabase == nil {
                items.append((name, token.revealedValue))
                secrets.append(token.revealedValue)
            }
        case .bearerSubprotocol:
            if let token {
                let encoded = Self.base64URL(token.revealedValue)
                subprotocols = ["phoenix", "base64url.bearer.phx." + encoded]
                secrets += [token.revealedValue, encoded]
            }
        case .none:
            break
        }
        let encode = { (text: String) in text.addingPercentEncoding(withAllowedCharacters: .urlUnreserved) ?? text }
        let query = items.map { encode($0.0) + "=" + encode($0.1) }.joined(separator: "&")
        components.percentEncodedQuery = [components.percentEncodedQuery, query].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: "&")
        return Handshake(url: components.url ?? endpoint, subprotocols: subprotocols, secrets: secrets, requiresSubprotocol: false)
    }

    /// Every close is retried: the server's idle timeout closes 1002 on Bandit and 1000 on
    /// Cowboy, a kicked user gets 1000, a restart 1012 — none says "never come back". What
    /// would (the credentials) is the upgrade's 403 on the next attempt.
    package func ending(code: CloseCode?, reason: String) -> WireEnding {
        guard let code else { return WireEnding(DisconnectReason(.networkLost, detail: reason.isEmpty ? "no close frame" : reason), .retry) }
        return WireEnding(.serverClosed("code \(code)" + (reason.isEmpty ? "" : ": \(reason)")), .retry)
    }

    /// Phoenix answers a refused `connect/3` with a bare 403, the same for a wrong token, a
    /// missing token and a `vsn` it does not speak: the message names all three.
    package func ending(httpStatus: Int) -> WireEnding {
        guard httpStatus == 403 else {
            let ending = Self.standardEnding(httpStatus: httpStatus)
            guard httpStatus == 404 else { return ending }
            return WireEnding(.error((ending.reason.detail ?? "") + " (is the URL the socket's, e.g. wss://host/socket?)"), ending.disposition)
        }
        let detail = "the server refused the WebSocket upgrade with HTTP 403, as Phoenix does for any of three causes: "
            + "a wrong or expired token, a missing token (the token provider gave none, or the server reads another "
            + "query item than '\(credentials.queryItemName ?? "the one configured")'), or a serializer version (vsn \(Self.version)) the server does not speak"
        return WireEnding(DisconnectReason(.credentialsRejected, detail: detail), .doNotRetry)
    }

    /// How many refused upgrades in a row Supabase gets before a 403 is final (see below).
    package static let supabaseRefusalRetries = 3

    /// Supabase also answers 403 while the tenant's joins-per-second limit holds (about a
    /// second): with an API key that is valid by its own `exp` (or is not a JWT, which the client
    /// cannot judge), a 403 is retried after 1, 2 and 4 s before it counts as rejected
    /// credentials. An API key whose `exp` has passed is rejected at once.
    package func ending(httpStatus: Int, refusalsInARow: Int) -> WireEnding {
        guard let supabase, httpStatus == 403 else { return ending(httpStatus: httpStatus) }
        let expired = JWTExpiry.hasExpired(supabase.apiKey, nowMilliseconds: supabase.now())
        if !expired, refusalsInARow <= Self.supabaseRefusalRetries {
            let delay = Duration.seconds(1 << (max(refusalsInARow, 1) - 1))
            let detail = "Supabase refused the WebSocket upgrade with HTTP 403 (\(refusalsInARow) of \(Self.supabaseRefusalRetries + 1) in a row): "
                + "its joins-per-second limit answers so for about a second; retrying in \(delay)"
            return WireEnding(.error(detail), .retryAfter(delay))
        }
        let detail = "Supabase refused the WebSocket upgrade with HTTP 403" + (expired ? ": the API key has expired (its exp has passed)" : " \(refusalsInARow) times in a row")
            + " — a wrong, expired or badly signed API key, an unknown project, or a serializer version (vsn \(Self.version)) the server does not speak"
        return WireEnding(DisconnectReason(.credentialsRejected, detail: detail), .doNotRetry)
    }

    package var settingsProblem: String? {
        if case .queryItem(let name) = credentials {
            if name.isEmpty { return "the Phoenix credentials query item's name is empty" }
            if name == "vsn" || (supabase != nil && name == "apikey") { return "the Phoenix credentials query item '\(name)' is one the socket uses itself" }
        }
        if params.keys.contains("vsn") { return "the Phoenix params include 'vsn', which the adapter sets itself (\(Self.version))" }
        if let supabase, supabase.apiKey.isEmpty { return "the Supabase API key is empty" }
        if keepAlive <= .zero { return "the Phoenix keepAlive must be more than 0" }
        if replyTimeout <= .zero { return "the Phoenix replyTimeout must be more than 0" }
        return nil
    }

    /// A publish is `{"event": name, "payload"?: …}`: the push's event and payload.
    package func encodingProblem(publishing data: JSONValue, to channel: String, key: String) -> String? {
        Self.push(from: data).failure
    }

    /// The event and payload of a publish's data, or why it has none.
    static func push(from data: JSONValue) -> (event: String, payload: JSONValue, failure: String?) {
        guard let event = data["event"]?.stringValue, !event.isEmpty else {
            return ("", .null, "a Phoenix publish is {\"event\": name, \"payload\": …}: the data has no event name")
        }
        if event.hasPrefix("phx_") || event == PhoenixMessage.Event.heartbeat {
            return ("", .null, "a Phoenix publish cannot use the event '\(event)': Phoenix reserves it")
        }
        return (event, data["payload"] ?? .object([:]), nil)
    }

    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// Where a Phoenix socket carries the token provider's token.
///
/// An input you choose; a later release may add a way, so a `switch` over it needs a `default`.
public enum PhoenixCredentials: Hashable, Sendable {
    /// A query item of the socket's URL (Phoenix reads it in `connect/3`), redacted from every
    /// log line, description and error. A URL can still reach proxies' logs.
    case queryItem(String)
    /// Phoenix 1.8's `auth_token`: the `base64url.bearer.phx.…` WebSocket subprotocol.
    case bearerSubprotocol
    /// No token on the socket.
    case none

    var queryItemName: String? {
        if case .queryItem(let name) = self { name } else { nil }
    }
}

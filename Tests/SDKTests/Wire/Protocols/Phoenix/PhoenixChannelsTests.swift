import ConnectionPolicy
import Foundation
@testable import SDK
import Testing

/// What the Phoenix protocol says about opening and ending a socket, from
/// `../shared/research/phoenix-transcripts.md` §3 and §6–7.
@Suite("Phoenix channels: handshake and endings")
struct PhoenixChannelsTests {
    @Test("the socket's URL: /websocket added, vsn 2.0.0, the app's params and the token as a query item, listed as a secret (the probe's URLs, §6)")
    func handshakeURL() {
        let phoenix = PhoenixChannels(params: ["user": "alice"])
        let handshake = phoenix.handshake(endpoint: URL(string: "ws://127.0.0.1:4123/socket")!, credentials: Secret("secret"))
        #expect(handshake.url.absoluteString == "ws://127.0.0.1:4123/socket/websocket?vsn=2.0.0&user=alice&token=secret")
        #expect(handshake.secrets == ["secret"] && handshake.subprotocols.isEmpty && !handshake.requiresSubprotocol)
        #expect(handshake.redacted(handshake.url.absoluteString) == "ws://127.0.0.1:4123/socket/websocket?vsn=2.0.0&user=alice&token=<redacted>")
        let bare = phoenix.handshake(endpoint: URL(string: "wss://example.com")!, credentials: nil)
        #expect(bare.url.absoluteString == "wss://example.com/socket/websocket?vsn=2.0.0&user=alice", "no token: no query item")
        let named = PhoenixChannels(credentials: .queryItem("auth token")).handshake(endpoint: URL(string: "wss://h/socket/websocket?x=1")!, credentials: Secret("a&b"))
        #expect(named.url.absoluteString == "wss://h/socket/websocket?x=1&vsn=2.0.0&auth%20token=a%26b")
    }

    @Test("Phoenix 1.8's bearer subprotocol: the token base64url-encoded, offered beside 'phoenix', not required back (the 101 names none)")
    func bearerSubprotocol() {
        let handshake = PhoenixChannels(credentials: .bearerSubprotocol).handshake(endpoint: URL(string: "wss://h/socket")!, credentials: Secret("tok?>"))
        #expect(handshake.url.absoluteString == "wss://h/socket/websocket?vsn=2.0.0")
        #expect(handshake.subprotocols == ["phoenix", "base64url.bearer.phx.dG9rPz4"])
        #expect(handshake.secrets.contains("dG9rPz4") && !handshake.requiresSubprotocol)
    }

    @Test("Supabase: apikey and vsn in the URL (both secrets' key redacted), the token not: it goes in the joins")
    func supabaseURL() {
        let supabase = PhoenixChannels(credentials: .none, supabase: .init(apiKey: "anon-key"))
        let handshake = supabase.handshake(endpoint: URL(string: "wss://abc.supabase.co/realtime/v1")!, credentials: Secret("user-jwt"))
        #expect(handshake.url.absoluteString == "wss://abc.supabase.co/realtime/v1/websocket?apikey=anon-key&vsn=2.0.0")
        #expect(handshake.secrets == ["anon-key"])
        #expect(supabase.handshake(endpoint: URL(string: "wss://abc.supabase.co")!, credentials: nil).url.path == "/realtime/v1/websocket")
    }

    @Test(
        "every close is retried: the idle timeout's 1002 (Bandit) and 1000 (Cowboy), a kicked user's 1000, a restart's 1012 (1000 from Bandit shutting down), a crash's 1011, no close frame (§3, §7)",
        arguments: [CloseCode?.some(.normal), .some(.protocolError), .some(CloseCode(1012)), .some(.internalError), nil]
    )
    func closesAreRetried(code: CloseCode?) {
        let ending = PhoenixChannels().ending(code: code, reason: "")
        #expect(ending.disposition == .retry)
        #expect(ending.reason.code == (code == nil ? .networkLost : .serverClosed))
    }

    @Test("a 403 at the upgrade: credentials rejected, no retry, and the message names the three causes Phoenix does not tell apart (§6 RAW)")
    func forbidden() {
        let ending = PhoenixChannels().ending(httpStatus: 403)
        #expect(ending.reason.code == .credentialsRejected && ending.disposition == .doNotRetry)
        let detail = ending.reason.detail ?? ""
        #expect(detail.contains("wrong or expired token") && detail.contains("missing token") && detail.contains("vsn 2.0.0"), "\(detail)")
        #expect(PhoenixChannels().ending(httpStatus: 503).disposition == .retry)
        #expect(PhoenixChannels().ending(httpStatus: 404).disposition == .doNotRetry)
    }

    @Test("settings a socket could not work with are refused", arguments: [
        (PhoenixChannels(credentials: .queryItem("")), "empty"),
        (PhoenixChannels(credentials: .queryItem("vsn")), "uses itself"),
        (PhoenixChannels(params: ["vsn": "1.0.0"]), "sets itself"),
        (PhoenixChannels(supabase: .init(apiKey: "")), "API key is empty"),
        (PhoenixChannels(keepAlive: .zero), "keepAlive"),
    ])
    func settingsProblems(phoenix: PhoenixChannels, expected: String) {
        #expect(phoenix.settingsProblem?.contains(expected) == true, "\(phoenix.settingsProblem ?? "nil")")
    }

    @Test("the builder refuses them with the protocol's words")
    func builderRefuses() {
        #expect(throws: (any Error).self) {
            try AppSettings.Builder().serverURL(URL(string: "wss://h/socket")!).serverProtocol(.phoenix(credentials: .queryItem(""))).build()
        }
    }
}

import Foundation
import SDK
import SDKTesting
import Testing

@Suite("AppSettings.Builder")
struct AppSettingsTests {
    let base = AppSettings.Builder().serverURL("wss://realtime.example.com/")

    @Test("defaults: Auto mode, 30 s background timeout, no grace")
    func defaults() throws {
        let settings = try base.build()
        #expect(settings.mode == .auto)
        #expect(settings.backgroundTimeout == .seconds(30))
        #expect(settings.backgroundGrace == .zero)
        #expect(settings.makePolicy().name == "auto")
    }

    @Test("every default the README and the builder's docs state")
    func statedDefaults() throws {
        let settings = try base.build()
        #expect(settings.heartbeat?.interval == .seconds(25))
        #expect(settings.heartbeat?.timeout == .seconds(10))
        #expect(settings.connectTimeout == .seconds(10))
        #expect(settings.requestTimeout == .seconds(10))
        #expect(settings.outboxLimit == 100)
        #expect(settings.outboxTimeout == .seconds(30))
        #expect(settings.subscriberBufferLimit == 10_000)
        #expect(settings.stableConnectionAfter == .seconds(5))
        #expect(settings.reconnectBackoff == .standard)
        #expect(Backoff.standard == Backoff(initial: .milliseconds(500), multiplier: 2, maximum: .seconds(30), jitter: 0.2, maxAttempts: nil))
        #expect(settings.replayMode == .pipelined)
        #expect(settings.replayAttempts == 3)
        #expect(settings.foregroundProbeTimeout == .seconds(3))
        #expect(settings.allowsInsecureTransport == false)
        #expect(settings.serverProtocol.name == "tether")
        #expect(URLSessionWebSocketTransport().maximumMessageSize == 1 << 20)
    }

    @Test("autoEstablishSocketConnection(false) selects Manual mode")
    func manual() throws {
        let settings = try base.autoEstablishSocketConnection(false).backgroundTimeout(.seconds(12)).build()
        #expect(settings.mode == .manual)
        let policy = settings.makePolicy() as? ManualPolicy
        #expect(policy?.configuration.backgroundTimeout == .seconds(12))
    }

    @Test("a custom policy is the escape hatch")
    func custom() throws {
        let settings = try base.policy(ManualPolicy(.init(backgroundTimeout: .seconds(5)))).build()
        #expect(settings.mode == .custom("manual"))
        #expect((settings.makePolicy() as? ManualPolicy)?.configuration.backgroundTimeout == .seconds(5))
    }

    @Test(
        "bad values are typed errors",
        arguments: [
            (AppSettings.Builder(), SettingsError.Code.missingURL),
            (AppSettings.Builder().serverURL("not a url at all"), .invalidURL),
            (AppSettings.Builder().serverURL("https://example.com/"), .invalidURL),
            (AppSettings.Builder().serverURL("wss:///nohost"), .invalidURL),
            (AppSettings.Builder().serverURL("wss://example.com/?token=abc"), .invalidURL),
            (AppSettings.Builder().serverURL("wss://user:pw@example.com/"), .invalidURL),
            (AppSettings.Builder().serverURL("ws://example.com/"), .insecureTransport),
            (AppSettings.Builder().serverURL("wss://example.com/").backgroundTimeout(.zero), .invalidDuration),
            (AppSettings.Builder().serverURL("wss://example.com/").backgroundTimeout(.seconds(-1)), .invalidDuration),
            (AppSettings.Builder().serverURL("wss://example.com/").backgroundGrace(.seconds(-1)), .invalidDuration),
            (AppSettings.Builder().serverURL("wss://example.com/").connectTimeout(.zero), .invalidDuration),
            (AppSettings.Builder().serverURL("wss://example.com/").requestTimeout(.seconds(100_000)), .invalidDuration),
            (AppSettings.Builder().serverURL("wss://example.com/").reconnectBackoff(Backoff(jitter: 2)), .invalidBackoff),
            (AppSettings.Builder().serverURL("wss://example.com/").subscriberBufferLimit(0), .invalidLimit),
            (AppSettings.Builder().serverURL("wss://example.com/").subscriberBufferLimit(1_000_001), .invalidLimit),
        ]
    )
    func invalid(builder: AppSettings.Builder, code: SettingsError.Code) {
        #expect(throws: SettingsError.self) { try builder.build() }
        do {
            _ = try builder.build()
        } catch {
            #expect(error.code == code, "\(error)")
        }
    }

    @Test(
        "a Socket.IO configuration that would connect and then do nothing is refused at build()",
        arguments: [
            (ServerProtocol.socketIO(credentialsInQuery: ""), "empty query item"),
            (.socketIO(credentialsInQuery: "EIO"), "Engine.IO uses itself"),
            (.socketIO(events: SocketIOEvents(join: "")), "join event name is empty"),
            (.socketIO(events: SocketIOEvents(message: "disconnect")), "reserved by Socket.IO"),
            (.socketIO(events: SocketIOEvents(join: "room", leave: "room")), "join and leave events are both 'room'"),
            (.socketIO(events: SocketIOEvents(channelKey: "")), "channelKey"),
        ]
    )
    func invalidSocketIO(serverProtocol: ServerProtocol, problem: String) {
        do {
            _ = try base.serverProtocol(serverProtocol).build()
            Issue.record("expected invalidProtocol (\(problem))")
        } catch {
            #expect(error.code == .invalidProtocol)
            #expect(error.message.contains(problem), "\(error)")
        }
    }

    @Test("a Socket.IO configuration with its own names and a query item is accepted")
    func validSocketIO() throws {
        let events = SocketIOEvents(join: "subscribe", leave: "unsubscribe", publish: "send", message: "broadcast", channelKey: "channel")
        let settings = try base.serverProtocol(.socketIO(events: events, credentialsInQuery: "access_token")).build()
        #expect(settings.serverProtocol.name == "socket.io")
    }

    @Test("ws:// is allowed for loopback, or when insecure transport is allowed explicitly", arguments: ["ws://127.0.0.1:8080/", "ws://localhost/", "ws://[::1]:9/"])
    func loopbackIsFine(url: String) throws {
        let settings = try AppSettings.Builder().serverURL(url).build()
        #expect(settings.serverURL.absoluteString == url)
        #expect(settings.allowsInsecureTransport == false)
    }

    @Test("allowInsecureTransport(true) permits ws:// to other hosts")
    func insecureAllowed() throws {
        let settings = try AppSettings.Builder().serverURL("ws://example.com/").allowInsecureTransport(true).build()
        #expect(settings.serverURL.absoluteString == "ws://example.com/")
        #expect(settings.allowsInsecureTransport)
        #expect(throws: SettingsError.self) { try AppSettings.Builder().serverURL("ws://example.com/").build() }
    }

    @Test("an error about a URL with credentials does not repeat them")
    func errorDoesNotLeak() {
        do {
            _ = try AppSettings.Builder().serverURL("wss://example.com/?token=hunter2").build()
            Issue.record("expected an error")
        } catch {
            #expect(!error.description.contains("hunter2"))
        }
    }

    @Test(
        "a URL that does not parse: the error names its scheme and host only, never its user, password, path, query or fragment",
        arguments: [
            "wss://ex ample.com/socket?token=hunter2",
            "wss://user:hunter2@ex ample.com/",
            "wss://ex ample.com/hunter2/socket",
            "wss://ex ample.com/#hunter2",
        ]
    )
    func unparsableURLIsRedacted(url: String) {
        do {
            _ = try AppSettings.Builder().serverURL(url).build()
            Issue.record("expected an error for \(url)")
        } catch {
            #expect(error.code == .invalidURL)
            #expect(error.description.contains("is not a URL") && error.description.contains("ex ample.com"), "\(error)")
            #expect(!error.description.contains("hunter2") && !error.description.contains("user"), "\(error)")
        }
    }

    @Test("a token provider may return a plain String (review item 9.6); it reaches the server's auth")
    func plainStringTokenProvider() async throws {
        let server = TestServer(tokens: ["plain"])
        let settings = try AppSettings.Builder().serverURL("ws://127.0.0.1:9/").tokenProvider { "plain" }.noHeartbeat().build()
        let session = Session(settings: settings, transport: server.transport(), clock: TestClock())
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
        }
    }
}

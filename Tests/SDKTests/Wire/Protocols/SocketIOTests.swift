import ConnectionPolicy
import Foundation
import SDK
import Testing

/// The Socket.IO v4 / Engine.IO v4 machine, table by table, from the transcript recorded against
/// python-socketio 5.18.1 (`../shared/research/protocol-adapters.md`, A.3).
@Suite("Socket.IO machine")
struct SocketIOTests {
    static let open = #"0{"sid":"bjGaPq3-0u2naBDcAAAA","upgrades":[],"pingTimeout":3000,"pingInterval":5000,"maxPayload":1000000}"#

    /// The text frames sent among `actions`; every other action must be exactly `others`.
    func sent(_ actions: [WireAction], besides others: [WireAction] = [], sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
        frames(of: actions, besides: others, sourceLocation: sourceLocation).compactMap { if case .text(let text) = $0 { text } else { nil } }
    }

    func ready(_ configuration: SocketIO = SocketIO()) -> SocketIO.Machine {
        var machine = configuration.makeMachine()
        expectKinds(machine.start(credentials: Secret("s3cret")), [.arm])
        expectKinds(machine.receive(.text(Self.open)), [.arm, .send])
        expectKinds(machine.receive(.text(#"40{"sid":"_Jh1dtQWV2raei6gAAAD"}"#)), [.ready])
        return machine
    }

    @Test("the server speaks first; the namespace connect carries the credentials; 40 makes it ready")
    func handshake() {
        var machine = SocketIO().makeMachine()
        #expect(machine.start(credentials: Secret("s3cret")) == [.arm(SocketIO.heartbeat, after: .seconds(45))])
        let opened = machine.receive(.text(Self.open))
        #expect(opened.contains(.arm(SocketIO.heartbeat, after: .milliseconds(8000))), "pingInterval + pingTimeout")
        #expect(sent(opened, besides: [.arm(SocketIO.heartbeat, after: .milliseconds(8000))]) == [#"40{"token":"s3cret"}"#])
        #expect(machine.receive(.text(#"40{"sid":"_Jh1dtQWV2raei6gAAAD"}"#)) == [.ready])
    }

    /// python-engineio 4 with `ping_interval=0.5` sends `"pingInterval":0` (it rounds down to
    /// whole seconds): a heartbeat that cannot work, and a setting no reconnect can change.
    @Test("an open packet announcing a ping interval of 0 ends the connection with a typed error naming the setting, not retried")
    func zeroPingInterval() {
        var machine = SocketIO().makeMachine()
        expectKinds(machine.start(credentials: nil), [.arm])
        let actions = machine.receive(.text(#"0{"sid":"x","upgrades":[],"pingTimeout":20000,"pingInterval":0,"maxPayload":1000000}"#))
        #expect(actions.dropLast() == [.cancel(SocketIO.heartbeat)], "no namespace connect: the heartbeat cancelled, then the end")
        guard case .end(let ending)? = actions.last else {
            Issue.record("not ended: \(actions)")
            return
        }
        #expect(ending.disposition == .doNotRetry)
        #expect(ending.reason.code == .error)
        #expect(ending.reason.detail?.contains("pingInterval 0 ms") == true, "\(ending.reason)")
        #expect(ending.reason.detail?.contains("ping_interval") == true)
    }

    @Test("44 connect_error is rejected credentials: no retry")
    func connectError() {
        var machine = SocketIO().makeMachine()
        expectKinds(machine.start(credentials: Secret("wrong")), [.arm])
        expectKinds(machine.receive(.text(Self.open)), [.arm, .send])
        let actions = machine.receive(.text(#"44{"message":"unauthorized"}"#))
        #expect(actions.last == .end(WireEnding(DisconnectReason(.credentialsRejected, detail: "unauthorized"), .doNotRetry)))
    }

    @Test("41 from the server means do not reconnect")
    func serverDisconnect() {
        var machine = ready()
        #expect(machine.receive(.text("41")).last == .end(WireEnding(.serverClosed("io server disconnect"), .doNotRetry)))
    }

    @Test("the server's ping is answered and re-arms the watchdog; silence past it ends the link, retried")
    func heartbeat() {
        var machine = ready()
        #expect(machine.receive(.text("2")) == [.send(.text("3")), .arm(SocketIO.heartbeat, after: .milliseconds(8000))])
        let actions = machine.timerFired(SocketIO.heartbeat)
        guard case .end(let ending)? = actions.last else {
            Issue.record("not ended: \(actions)")
            return
        }
        #expect(ending.reason.code == .networkLost)
        #expect(ending.disposition == .retry)
    }

    @Test("subscribe is the join event with an ack; messages are routed by their channel; leave on unsubscribe")
    func joinAndMessages() {
        var machine = ready()
        #expect(machine.perform(.subscribe(7, Topic("room-1"), resume: nil)) == [.send(.text(#"420["join","room-1"]"#))],
                "the join alone: the subscription is made by its ack, not before")
        #expect(machine.receive(.text(#"430[{"ok":true}]"#)) == [.subscribed(7, .live(at: nil))])
        #expect(machine.receive(.text(#"42["message",{"room":"room-1","text":"hi"}]"#)) == [.delivery(7, ["room": "room-1", "text": "hi"], position: nil)])
        #expect(machine.receive(.text(#"42["message",{"room":"room-2","text":"not ours"}]"#)) == [])
        #expect(machine.receive(.text(#"42["other",{"room":"room-1"}]"#)) == [])
        #expect(sent(machine.perform(.unsubscribe(7))) == [#"42["leave","room-1"]"#])
        #expect(machine.receive(.text(#"42["message",{"room":"room-1","text":"late"}]"#)) == [])
    }

    @Test("a resubscribe cannot resume (python-socketio has no connection state recovery): refetch")
    func resubscribe() {
        var machine = ready()
        expectKinds(machine.perform(.subscribe(7, Topic("room-1"), resume: .opaque("x"))), [.send])
        #expect(machine.receive(.text(#"430[{"ok":true}]"#)) == [.subscribed(7, .resumeUnsupported)])
    }

    @Test("a join refused in its ack fails the subscription")
    func joinRefused() {
        var machine = ready()
        #expect(machine.perform(.subscribe(7, Topic("secret"), resume: nil)) == [.send(.text(#"420["join","secret"]"#))])
        let actions = machine.receive(.text(#"430[{"ok":false,"error":"forbidden"}]"#))
        #expect(actions == [.subscriptionFailed(7, WireFailure(code: "rejected", message: "forbidden", payload: [["ok": false, "error": "forbidden"]]))])
    }

    @Test("publish is an event with an ack; without acks it is sent, not confirmed")
    func publish() {
        var machine = ready()
        #expect(sent(machine.perform(.publish(3, Topic("room-1"), ["text": "hi"], key: nil))) == [#"420["publish",{"room":"room-1","text":"hi"}]"#])
        #expect(machine.receive(.text(#"430[{"ok":true}]"#)) == [.replied(3, .success(.acknowledged(position: nil, payload: [["ok": true]])))])
        var silent = ready(SocketIO(acknowledgesPublishes: false))
        let actions = silent.perform(.publish(4, Topic("room-1"), "hi", key: nil))
        #expect(sent(actions, besides: [.replied(4, .success(.sentUnconfirmed))]) == [#"42["publish",{"data":"hi","room":"room-1"}]"#])
        #expect(actions.last == .replied(4, .success(.sentUnconfirmed)))
        #expect(SocketIO(acknowledgesPublishes: false).capabilities.publishAcknowledgement == .none)
    }

    @Test("commands before the namespace is joined wait for it")
    func commandsWait() {
        var machine = SocketIO().makeMachine()
        expectKinds(machine.start(credentials: nil), [.arm])
        #expect(machine.perform(.subscribe(7, Topic("room-1"), resume: nil)) == [])
        expectKinds(machine.receive(.text(Self.open)), [.arm, .send])
        let actions = machine.receive(.text("40"))
        #expect(actions.first == .ready)
        #expect(sent(actions, besides: [.ready]) == [#"420["join","room-1"]"#])
    }

    @Test("the client cannot ping: a probe is answered by the server's next packet, or ends with the watchdog")
    func probeWaitsForTheServer() {
        var machine = ready()
        #expect(machine.perform(.ping(9)).isEmpty, "nothing to send: Engine.IO v4 has no client ping")
        #expect(machine.perform(.ping(10)).isEmpty)
        let answered = machine.receive(.text("2"))
        #expect(answered.prefix(2) == [.replied(9, .success(.acknowledged(position: nil, payload: nil))),
                                       .replied(10, .success(.acknowledged(position: nil, payload: nil)))])
        #expect(sent(answered, besides: [.replied(9, .success(.acknowledged(position: nil, payload: nil))), .replied(10, .success(.acknowledged(position: nil, payload: nil))), .arm(SocketIO.heartbeat, after: .milliseconds(8000))]) == ["3"], "and the server's ping is still answered")
        #expect(machine.receive(.text("2")).contains { if case .replied = $0 { true } else { false } } == false, "each probe is answered once")
        #expect(machine.perform(.ping(11)).isEmpty)
        #expect(machine.timerFired(SocketIO.heartbeat).last == .end(WireEnding(DisconnectReason(.networkLost, detail: "no server ping within 8.0 seconds"), .retry)))
        #expect(SocketIO().capabilities.canProbe == false)
    }

    @Test("the handshake adds Engine.IO's path and query; a token goes in the URL only by opt-in, listed as a secret")
    func handshakeURL() throws {
        let root = try #require(URL(string: "wss://chat.example.com/"))
        let plain = SocketIO().handshake(endpoint: root, credentials: Secret("s3cret"))
        #expect(plain.url.absoluteString == "wss://chat.example.com/socket.io/?EIO=4&transport=websocket")
        #expect(plain.secrets.isEmpty && plain.subprotocols.isEmpty)
        let custom = SocketIO().handshake(endpoint: try #require(URL(string: "ws://127.0.0.1:9/chat/io/")), credentials: nil)
        #expect(custom.url.absoluteString == "ws://127.0.0.1:9/chat/io/?EIO=4&transport=websocket")
        let inQuery = SocketIO(credentialsQueryItem: "token").handshake(endpoint: root, credentials: Secret("a b&c"))
        #expect(inQuery.url.absoluteString == "wss://chat.example.com/socket.io/?EIO=4&transport=websocket&token=a%20b%26c")
        #expect(inQuery.redacted("GET \(inQuery.url.absoluteString) failed; token a b&c") == "GET wss://chat.example.com/socket.io/?EIO=4&transport=websocket&token=<redacted> failed; token <redacted>")
    }

    @Test("broken packets end the connection, retried", arguments: ["9", "4", #"0not json"#, "42", #"4/admin,2["x"]"#])
    func malformed(packet: String) {
        var machine = packet.hasPrefix("0") ? SocketIO().makeMachine() : ready()
        expectKinds(machine.start(credentials: nil), [.arm])
        guard case .end(let ending)? = machine.receive(.text(packet)).last else {
            Issue.record("'\(packet)' did not end the connection")
            return
        }
        #expect(ending.disposition == .retry)
    }

    @Test("goodbye leaves the namespace")
    func goodbye() {
        var machine = ready()
        #expect(sent(machine.perform(.goodbye), besides: [.cancel(SocketIO.heartbeat)]) == ["41"])
    }

    @Test("every close is retried: the close code carries no meaning here")
    func closes() {
        #expect(SocketIO.ending(code: .normal, reason: "").disposition == .retry)
        #expect(SocketIO.ending(code: nil, reason: "reset").reason.code == .networkLost)
    }
}

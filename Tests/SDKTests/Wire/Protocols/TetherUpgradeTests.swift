import ConnectionPolicy
import Foundation
import SDK
import SDKTesting
import Testing

/// Version 2: resume in the upgrade request — the header's encoding, the handshake a session
/// opens with, the machine on a version-2 socket, and all of it against `ServerCore`.
@Suite("Tether version 2: resume in the upgrade")
struct TetherUpgradeTests: TetherWireTesting {
    let codec = JSONWireCodec()
    let endpoint = URL(string: "wss://chat.example.com/")!

    @Test("the header carries any channel name and its since, and reads back the same", arguments: [
        [TetherUpgrade.Entry(id: 1, channel: "room-1", since: 41), TetherUpgrade.Entry(id: 2, channel: "lobby", since: nil)],
        [TetherUpgrade.Entry(id: 1, channel: "a,b;c%d e", since: 0), TetherUpgrade.Entry(id: 7, channel: "чат/😀", since: UInt64.max)],
        [],
    ])
    func headerRoundTrip(entries: [TetherUpgrade.Entry]) throws {
        let value = TetherUpgrade.encode(entries)
        #expect(!value.contains(" "), "no spaces or other separators unescaped: \(value)")
        #expect(try TetherUpgrade.decode(value) == entries)
    }

    @Test("a channel is written with RFC 3986's percent-encoding, byte for byte as Foundation writes it, and read back", arguments: [
        "room-1", "A-Z_a.z~09", "a,b;c%d e", "чат/😀", "tab\there", "\u{01}\u{7F}", "+=&?#[]@!$'()*",
    ])
    func percentEncoding(channel: String) throws {
        var text = ""
        TetherUpgrade.percentEncode(channel, into: &text)
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        #expect(text == channel.addingPercentEncoding(withAllowedCharacters: unreserved))
        #expect(TetherUpgrade.percentDecode(Substring(text)) == channel)
    }

    @Test("lower-case hex digits and unescaped bytes read as well")
    func percentDecodingLeniency() {
        #expect(TetherUpgrade.percentDecode("caf%c3%a9") == "café")
        #expect(TetherUpgrade.percentDecode("café+x") == "café+x")
    }

    @Test("a malformed header is refused, naming the problem", arguments: [
        "1", "x;room", "1;room;-3", "1;room;2;9", "1;;5", "1;room,1;other", "1;room,2;room", "1;" + String(repeating: "a", count: 257),
        "1;ro%G1om", "1;room%4", "1;room%", "1;%FF%FE",
    ])
    func headerRefused(value: String) {
        #expect(throws: TetherUpgrade.MalformedHeader.self) { try TetherUpgrade.decode(value) }
    }

    @Test("the handshake offers tether.v3 and tether.v2, the credentials in Authorization (never the URL), the subscriptions numbered from 1")
    func handshake() {
        let handshake = TetherProtocol().handshake(endpoint: endpoint, credentials: Secret("tok-1"), resuming: resume([("room-1", 41), ("lobby", nil)]))
        #expect(handshake.url == endpoint)
        #expect(handshake.subprotocols == ["tether.v3", "tether.v2"])
        #expect(handshake.requiresSubprotocol == false, "a version-1 server chooses none and still works")
        #expect(handshake.headers == ["Authorization": "Bearer tok-1", "Tether-Resume": "1;room-1;41,2;lobby"])
        #expect(handshake.carried.map(\.topic.name) == ["room-1", "lobby"])
    }

    @Test("a list over 4 KiB stays out of the header: the subscriptions go in frames after the 101")
    func tooLargeForHeader() {
        let many = (0..<400).map { ("channel-number-\($0)", UInt64?.some(UInt64($0))) }
        let handshake = TetherProtocol().handshake(endpoint: endpoint, credentials: Secret("t"), resuming: resume(many))
        #expect(handshake.headers["Tether-Resume"] == nil)
        #expect(handshake.headers["Authorization"] == "Bearer t")
        #expect(handshake.carried.isEmpty)
        var machine = TetherProtocol().makeConnectionMachine(continuing: nil, handshake: handshake, subprotocol: "tether.v2")
        #expect(machine.start(credentials: Secret("t")) == [.ready])
        #expect(sent(machine.perform(.subscribe(5, Topic("channel-number-0"), resume: .sequence(0)))) == [.subscribe(id: 1, channel: "channel-number-0", since: 0)])
    }

    @Test("a token that cannot be a header value, or a mode without version 2: version 1, nothing in headers")
    func versionOneHandshakes() {
        for (mode, token) in [(TetherHandshake.resumeInUpgrade, "has space"), (.pipelined, "tok"), (.afterAuthentication, "tok")] {
            let handshake = TetherProtocol(handshake: mode).handshake(endpoint: endpoint, credentials: Secret(token), resuming: resume([("room", 1)]))
            #expect(handshake.headers.isEmpty && handshake.subprotocols.isEmpty && handshake.carried.isEmpty, "\(mode)")
        }
    }

    @Test("on a version-2 socket: ready at once, nothing sent for carried subscriptions, their oks claimed by channel")
    func machineClaimsCarried() {
        let handshake = TetherProtocol().handshake(endpoint: endpoint, credentials: Secret("t"), resuming: resume([("room", 3), ("news", nil)]))
        var machine = TetherProtocol().makeConnectionMachine(continuing: nil, handshake: handshake, subprotocol: "tether.v2")
        #expect(machine.start(credentials: Secret("t")) == [.ready])
        #expect(machine.perform(.subscribe(70, Topic("room"), resume: .sequence(3))) == [])
        #expect(machine.perform(.subscribe(71, Topic("news"), resume: nil)) == [])
        #expect(sent(machine.perform(.subscribe(72, Topic("new-one"), resume: nil))) == [.subscribe(id: 3, channel: "new-one", since: nil)])
        #expect(machine.receive(frame(.ack(Ack(id: 1, sequence: 5)))) == [.subscribed(70, .caughtUp(to: .sequence(5)))])
        #expect(machine.receive(frame(.message(ChannelMessage(channel: "room", sequence: 4, data: "missed")))) == [.delivery(70, "missed", position: .sequence(4))])
        #expect(machine.receive(frame(.ack(Ack(id: 2, sequence: 9)))) == [.subscribed(71, .live(at: .sequence(9)))])
    }

    /// A version-2 machine whose upgrade carried "room" from 3: claimed by subscription 70, and
    /// answered (wire id 1, latest 5).
    private func roomCarriedClaimedAndAnswered() -> any WireMachine {
        let handshake = TetherProtocol().handshake(endpoint: endpoint, credentials: nil, resuming: resume([("room", 3)]))
        var machine = TetherProtocol().makeConnectionMachine(continuing: nil, handshake: handshake, subprotocol: "tether.v2")
        expectKinds(machine.start(credentials: nil), [.ready])
        #expect(machine.perform(.subscribe(70, Topic("room"), resume: .sequence(3))) == [])
        #expect(machine.receive(frame(.ack(Ack(id: 1, sequence: 5)))) == [.subscribed(70, .caughtUp(to: .sequence(5)))])
        return machine
    }

    @Test("a carried subscription is claimed once: left and subscribed again on the same socket, it goes in a frame")
    func claimedOnce() {
        var machine = roomCarriedClaimedAndAnswered()
        #expect(sent(machine.perform(.unsubscribe(70))) == [.unsubscribe(id: 2, channel: "room")])
        #expect(sent(machine.perform(.subscribe(71, Topic("room"), resume: .sequence(5)))) == [.subscribe(id: 3, channel: "room", since: 5)])
        #expect(machine.receive(frame(.ack(Ack(id: 3, sequence: 6)))) == [.subscribed(71, .caughtUp(to: .sequence(6)))])
    }

    @Test("a claimed carried route is not claimed again: a second subscribe of its channel on the same socket goes in a frame")
    func claimedRouteNotClaimedAgain() {
        var machine = roomCarriedClaimedAndAnswered()
        #expect(sent(machine.perform(.subscribe(71, Topic("room"), resume: .sequence(5)))) == [.subscribe(id: 2, channel: "room", since: 5)])
        #expect(machine.receive(frame(.ack(Ack(id: 2, sequence: 6)))) == [.subscribed(71, .caughtUp(to: .sequence(6)))])
    }

    @Test("a carried subscription the core no longer wants is unsubscribed when its ok comes, its messages dropped")
    func unclaimedCarried() {
        let handshake = TetherProtocol().handshake(endpoint: endpoint, credentials: nil, resuming: resume([("gone", 3)]))
        var machine = TetherProtocol().makeConnectionMachine(continuing: nil, handshake: handshake, subprotocol: "tether.v2")
        expectKinds(machine.start(credentials: nil), [.ready])
        #expect(sent(machine.receive(frame(.ack(Ack(id: 1, sequence: 5))))) == [.unsubscribe(id: 2, channel: "gone")])
        #expect(machine.receive(frame(.message(ChannelMessage(channel: "gone", sequence: 4, data: "x")))) == [])
    }

    @Test("a server that chose no subprotocol gets version 1: auth first, the replay pipelined behind it")
    func fallback() {
        let handshake = TetherProtocol().handshake(endpoint: endpoint, credentials: Secret("t"), resuming: resume([("room", 3)]))
        var machine = TetherProtocol().makeConnectionMachine(continuing: nil, handshake: handshake, subprotocol: nil)
        let start = machine.start(credentials: Secret("t"))
        #expect(sent(start, besides: [.pipelining]) == [.authenticate(id: 1, token: Secret("t"))])
        #expect(start.last == .pipelining)
        #expect(sent(machine.perform(.subscribe(70, Topic("room"), resume: .sequence(3)))) == [.subscribe(id: 2, channel: "room", since: 3)])
    }

    @Test("against ServerCore: the 101's answer is the oks and the catch-up, in order, nothing sent by the client")
    func againstServerCore() {
        var server = ServerCore(.init(tokens: ["t"]), now: { .zero })
        for index in 1...3 { _ = try? server.publish(.number(JSONNumber(index)), to: "room") }
        let handshake = TetherProtocol().handshake(endpoint: endpoint, credentials: Secret("t"), resuming: resume([("room", 1), ("quiet", nil)]))
        let answer = server.answerUpgrade(subprotocols: handshake.subprotocols, headers: handshake.headers)
        #expect(answer.subprotocol == "tether.v3")
        var machine = TetherProtocol().makeConnectionMachine(continuing: nil, handshake: handshake, subprotocol: answer.subprotocol)
        #expect(machine.start(credentials: Secret("t")) == [.ready])
        #expect(machine.perform(.subscribe(70, Topic("room"), resume: .sequence(1))).isEmpty)
        #expect(machine.perform(.subscribe(71, Topic("quiet"), resume: nil)).isEmpty)
        var actions: [WireAction] = []
        for case .send(1, let reply) in server.connectionOpened(1, upgrade: answer) { actions += machine.receive(reply) }
        #expect(actions == [
            .subscribed(70, .caughtUp(to: .sequence(3))),
            .delivery(70, 2, position: .sequence(2)),
            .delivery(70, 3, position: .sequence(3)),
            .subscribed(71, .live(at: .sequence(0))),
        ])
        #expect(server.isAuthenticated(1))
        #expect(server.subscriberCount(of: "room") == 1)
        let kept = try? machine.sessionState?.decoded(as: TetherSessionState.self)
        #expect(kept?.members == [.init(channel: "quiet", base: 0), .init(channel: "room", base: 3)], "version 3: the set as the server keeps it")
    }

    @Test("ServerCore refuses a version-2 upgrade with bad credentials (401) or a malformed list (400); without the offer it is version 1")
    func serverAnswers() {
        let server = ServerCore(.init(tokens: ["t"]), now: { .zero })
        let offer = ["tether.v2"]
        #expect(server.answerUpgrade(subprotocols: offer, headers: ["authorization": "Bearer nope"]) == .refuse(httpStatus: 401, reason: "credentials rejected"))
        #expect(server.answerUpgrade(subprotocols: offer, headers: [:]) == .refuse(httpStatus: 401, reason: "credentials rejected"))
        #expect(server.answerUpgrade(subprotocols: offer, headers: ["Authorization": "Basic dTpw"]) == .refuse(httpStatus: 401, reason: "the Authorization header is not 'Bearer <token>'"))
        guard case .refuse(400, _) = server.answerUpgrade(subprotocols: offer, headers: ["Authorization": "Bearer t", "Tether-Resume": "1;room;x"]) else {
            Issue.record("a malformed Tether-Resume must be refused with 400")
            return
        }
        #expect(server.answerUpgrade(subprotocols: [], headers: ["Authorization": "Bearer t"]) == .version1)
        var old = server
        old.acceptsVersion2 = false
        #expect(old.answerUpgrade(subprotocols: offer, headers: ["Authorization": "Bearer t"]) == .version1)
    }
}

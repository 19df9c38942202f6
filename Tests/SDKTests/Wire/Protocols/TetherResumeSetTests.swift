import ConnectionPolicy
import Foundation
import SDK
import SDKTesting
import Testing

/// Version 3: the resume set kept under a token — the header's encoding, the handshake that
/// names the set, the machine on a version-3 socket (the set resumed, or not after all).
@Suite("Tether version 3: the resume set")
struct TetherResumeSetTests: TetherWireTesting {
    let codec = JSONWireCodec()
    let endpoint = URL(string: "wss://chat.example.com/")!

    func member(_ channel: String, _ base: UInt64) -> TetherResumeSet.Member { .init(channel: channel, base: base) }

    /// The state a version-3 socket leaves: `token` and `members` (any order).
    func kept(_ token: String, _ members: [TetherResumeSet.Member]) -> WireSessionState {
        WireSessionState(TetherSessionState(token: token, members: TetherResumeSet.canonical(members)))
    }

    @Test("varints: one character under 32, and every width up to 64 bits reads back", arguments: [
        [0, 1, 31], [32, 1023, 1024], [UInt64.max, 0, UInt64.max - 1], [1 << 35, (1 << 60) + 7],
    ] as [[UInt64]])
    func varints(values: [UInt64]) {
        var bytes: [UInt8] = []
        for value in values { TetherResumeSet.appendVarint(value, to: &bytes) }
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(TetherResumeSet.varints(in: Substring(text)) == values)
        var small: [UInt8] = []
        TetherResumeSet.appendVarint(31, to: &small)
        #expect(small.count == 1)
    }

    @Test("a position travels as its distance from the base: at, above, below, live, left; too far is refused")
    func codes() throws {
        let members = [member("a", 100), member("b", 100), member("c", 100), member("d", 7), member("e", 0)]
        let positions: [TetherResumeSet.Position] = [.since(100), .since(103), .since(98), .live, .left]
        let request = try #require(TetherResumeSet.Request(token: "tok", members: members, positions: positions))
        #expect(request.codes == [2, 8, 5, 1, 0])
        #expect(request.wantedCount == 4)
        #expect(request.positions(for: members) == positions)
        let value = request.headerValue
        #expect(value.hasPrefix("tok;5;") && value.hasSuffix(";CIFBA"), "\(value)")
        #expect(try TetherResumeSet.Request(headerValue: value) == request)
        #expect(TetherResumeSet.Request(token: "tok", members: [member("a", 0)], positions: [.since(1 << 62)]) == nil)
        #expect(TetherResumeSet.Request(token: "tok", members: [member("a", 0)], positions: []) == nil)
    }

    @Test("another set (a member more or less, another base) or a code that does not resolve gives no positions")
    func mismatch() throws {
        let members = [member("a", 5), member("b", 9)]
        let request = try #require(TetherResumeSet.Request(token: "tok", members: members, positions: [.since(5), .live]))
        #expect(request.positions(for: [member("a", 5)]) == nil)
        #expect(request.positions(for: [member("a", 5), member("b", 10)]) == nil)
        #expect(request.positions(for: [member("a", 5), member("c", 9)]) == nil)
        let below = TetherResumeSet.Request(token: "tok", members: [member("a", 2)], positions: [.since(0)])
        #expect(below?.positions(for: [member("a", 2)]) == [.since(0)])
        var tooFar = try #require(below)
        tooFar.codes = [2 + 2 * 3 - 1]
        #expect(tooFar.positions(for: [member("a", 2)]) == nil, "three below a base of two")
    }

    @Test("a malformed Tether-Resume-Set is refused, naming the problem", arguments: [
        "", "tok;1;0000000000000000", "tok;x;0000000000000000;C", "tok;1;00000000000000;C", "tok;1;000000000000000g;C",
        "to.k;1;0000000000000000;C", ";1;0000000000000000;C", "tok;2;0000000000000000;C", "tok;1;0000000000000000;i",
        "tok;1;0000000000000000;C!", String(repeating: "t", count: 65) + ";1;0000000000000000;C", "tok;1;0000000000000000;" + String(repeating: "_", count: 13) + "A",
    ])
    func refused(value: String) {
        #expect(throws: TetherUpgrade.MalformedHeader.self) { try TetherResumeSet.Request(headerValue: value) }
    }

    @Test("the session state keeps any channel name and base, and reads back the same")
    func sessionStateRoundTrip() throws {
        let state = TetherSessionState(token: "T-1", members: [member("a,b;c%d", 0), member("чат/😀", UInt64.max), member(" ", 7)])
        #expect(try WireSessionState(state).decoded(as: TetherSessionState.self) == state)
        // The digest taken with the state is its members', made here or read back from the store.
        let decoded = try TetherSessionState.decoded(from: state.encodedData())
        #expect(decoded.digest == TetherResumeSet.digest(state.members) && state.digest == TetherResumeSet.digest(state.members))
        let empty = TetherSessionState(token: "T", members: [])
        #expect(try WireSessionState(empty).decoded(as: TetherSessionState.self) == empty)
        let damaged = WireSessionState(kind: TetherSessionState.kind, data: Data(#"{"token":"T","members":"x;room"}"#.utf8))
        #expect(throws: DecodingError.self) { try damaged.decoded(as: TetherSessionState.self) }
        let notJSON = WireSessionState(kind: TetherSessionState.kind, data: Data("{".utf8))
        #expect(throws: DecodingError.self) { try notJSON.decoded(as: TetherSessionState.self) }
    }

    @Test("the state written directly is the JSON Foundation's coders read and write")
    func sessionStateIsFoundationsJSON() throws {
        let state = TetherSessionState(token: "T\"1", members: [member("a,b;c%d", 0), member("чат/😀", UInt64.max)])
        #expect(try JSONDecoder().decode(TetherSessionState.self, from: state.encodedData()) == state)
        #expect(try TetherSessionState.decoded(from: JSONEncoder().encode(state)) == state)
    }

    @Test("canonical order is by UTF-8 bytes, whatever order the set was made in")
    func canonicalOrder() {
        let members = [member("é", 1), member("Z", 1), member("a", 1), member("e", 1), member("ab", 1), member("a\u{7F}", 1), member("aa", 1)]
        #expect(TetherResumeSet.canonical(members).map(\.channel) == ["Z", "a", "aa", "ab", "a\u{7F}", "e", "é"], "a prefix first; bytes, not characters")
        #expect(TetherResumeSet.digest(TetherResumeSet.canonical(members)) == TetherResumeSet.digest(TetherResumeSet.canonical(members.reversed())))
    }

    @Test("the handshake names the kept set by its token with each position; what it does not hold goes by name, numbered after it")
    func handshakeWithSet() throws {
        let state = kept("T1", [member("room", 40), member("news", 3), member("gone", 9)])
        let handshake = TetherProtocol().handshake(
            endpoint: endpoint, credentials: Secret("t"), resuming: resume([("room", 41), ("news", nil), ("fresh", 2)]), continuing: state
        )
        #expect(handshake.subprotocols == ["tether.v3", "tether.v2"])
        let set = try TetherResumeSet.Request(headerValue: try #require(handshake.headers["Tether-Resume-Set"]))
        #expect(set.token == "T1")
        #expect(set.positions(for: [member("gone", 9), member("news", 3), member("room", 40)]) == [.left, .live, .since(41)])
        #expect(handshake.headers["Tether-Resume"] == "3;fresh;2", "ids 1 and 2 answer the set's news and room")
        #expect(handshake.carried.map(\.topic.name) == ["news", "room", "fresh"])
        #expect(handshake.tentativelyCarried == 2)
    }

    @Test("a set too large for its header is not named: the subscriptions go by name (or in frames)")
    func setTooLarge() {
        let members = (0..<3000).map { member("c\($0)", UInt64($0) << 40) }
        let state = kept("T1", members)
        let handshake = TetherProtocol().handshake(
            endpoint: endpoint, credentials: Secret("t"), resuming: members.map { WireResume(topic: Topic($0.channel), position: .sequence($0.base / 2)) },
            continuing: state
        )
        #expect(handshake.headers["Tether-Resume-Set"] == nil)
        #expect(handshake.tentativelyCarried == 0)
        #expect(handshake.carried.isEmpty, "by name they do not fit either")
    }

    @Test("version 3, the set resumed: its subscriptions and the named ones are claimed, nothing sent; the server's token is kept with the bases")
    func resumed() throws {
        let state = kept("T1", [member("room", 40), member("news", 3)])
        let handshake = TetherProtocol().handshake(endpoint: endpoint, credentials: nil, resuming: resume([("room", 41), ("news", 3), ("fresh", nil)]), continuing: state)
        var machine = TetherProtocol().makeConnectionMachine(continuing: state, handshake: handshake, subprotocol: "tether.v3")
        #expect(machine.start(credentials: nil) == [.ready])
        #expect(machine.perform(.subscribe(70, Topic("room"), resume: .sequence(41))) == [])
        #expect(machine.perform(.subscribe(71, Topic("news"), resume: .sequence(3))) == [])
        #expect(machine.perform(.subscribe(72, Topic("fresh"), resume: nil)) == [])
        #expect(try machine.sessionState?.decoded(as: TetherSessionState.self)?.token == "T1", "until the server says, the last socket's")
        // The set's answer is its first frame: news (id 1) at 3, nothing missed; room (id 2) at 42, one past its since.
        var answers = TetherResumeSet.Answers()
        answers.append(latest: 3, from: 3, gap: false)
        answers.append(latest: 42, from: 41, gap: false)
        #expect(machine.receive(frame(.resumeSet(token: "T2", resumed: true, answers: answers))) == [
            .subscribed(71, .caughtUp(to: .sequence(3))), .subscribed(70, .caughtUp(to: .sequence(42))),
        ], "one frame answers the set: no ok per member")
        #expect(machine.receive(frame(.message(ChannelMessage(channel: "room", sequence: 42, data: "x")))) == [.delivery(70, "x", position: .sequence(42))])
        #expect(machine.receive(frame(.ack(Ack(id: 3, sequence: 0)))) == [.subscribed(72, .live(at: .sequence(0)))])
        #expect(sent(machine.perform(.ping(5))) == [.ping(id: 4)], "the next id is above every carried one")
        let next = try #require(try machine.sessionState?.decoded(as: TetherSessionState.self))
        #expect(next == TetherSessionState(token: "T2", members: [member("fresh", 0), member("news", 3), member("room", 42)]))
        #expect(machine.durableSessionState == nil, "a relaunch resumes by name")
    }

    @Test("version 3, the set not resumed: what the core claimed of it goes in frames with its since, the rest is dropped; the named ones stay carried")
    func notResumed() {
        let state = kept("T1", [member("room", 40), member("news", 3), member("later", 1)])
        let handshake = TetherProtocol().handshake(
            endpoint: endpoint, credentials: nil, resuming: resume([("room", 41), ("news", nil), ("later", 1), ("fresh", nil)]), continuing: state
        )
        var machine = TetherProtocol().makeConnectionMachine(continuing: state, handshake: handshake, subprotocol: "tether.v3")
        #expect(machine.start(credentials: nil) == [.ready])
        #expect(machine.perform(.subscribe(70, Topic("room"), resume: .sequence(41))) == [])
        #expect(machine.perform(.subscribe(71, Topic("news"), resume: nil)) == [])
        #expect(machine.perform(.subscribe(73, Topic("fresh"), resume: nil)) == [])
        #expect(machine.perform(.publish(9, Topic("room"), "x", key: "k")) == [], "a publish waits for the first frame")
        #expect(sent(machine.receive(frame(.resumeSet(token: "T2", resumed: false, answers: nil)))) == [
            .subscribe(id: 5, channel: "news", since: nil), .subscribe(id: 6, channel: "room", since: 41), .publish(id: 7, channel: "room", data: "x", key: "k"),
        ], "the resubscribes first: a publish never overtakes them")
        #expect(sent(machine.perform(.subscribe(72, Topic("later"), resume: .sequence(1)))) == [.subscribe(id: 8, channel: "later", since: 1)])
        #expect(machine.receive(frame(.ack(Ack(id: 4, sequence: 0)))) == [.subscribed(73, .live(at: .sequence(0)))])
        #expect(machine.receive(frame(.ack(Ack(id: 6, sequence: 44)))) == [.subscribed(70, .caughtUp(to: .sequence(44)))])
    }

    @Test("a resume_set anywhere but first, once, on version 3 ends the socket as a server's fault")
    func resumeSetOutOfPlace() {
        var v2 = TetherProtocol().makeConnectionMachine(continuing: nil, handshake: Handshake(url: endpoint), subprotocol: "tether.v2")
        _ = v2.start(credentials: nil)
        expectKinds(v2.receive(frame(.resumeSet(token: "T", resumed: false, answers: nil))), [.end])
        var v3 = TetherProtocol().makeConnectionMachine(continuing: nil, handshake: Handshake(url: endpoint), subprotocol: "tether.v3")
        _ = v3.start(credentials: nil)
        #expect(v3.receive(frame(.resumeSet(token: "T", resumed: false, answers: nil))) == [])
        expectKinds(v3.receive(frame(.resumeSet(token: "T", resumed: false, answers: nil))), [.end])
    }

    @Test("the codec reads resume_set and its answers, and refuses one without its fields, with a token that is not base-64url, or answers that are not varints, or gaps that name no member or go backwards")
    func codecReadsIt() throws {
        let answers = TetherResumeSet.Answers(codes: [0, 2], gaps: [1])
        #expect(try codec.decode(.text(#"{"gaps":"B","latest":"AC","resumed":true,"token":"a-_9","type":"resume_set"}"#)) == .resumeSet(token: "a-_9", resumed: true, answers: answers))
        #expect(try codec.decode(frame(.resumeSet(token: "T", resumed: true, answers: answers))) == .resumeSet(token: "T", resumed: true, answers: answers))
        #expect(try codec.decode(frame(.resumeSet(token: "T", resumed: false, answers: nil))) == .resumeSet(token: "T", resumed: false, answers: nil))
        #expect(try codec.decode(.text(#"{"latest":"","resumed":true,"token":"T","type":"resume_set"}"#)) == .resumeSet(token: "T", resumed: true, answers: .init()))
        for text in [
            #"{"token":"a","type":"resume_set"}"#, #"{"resumed":true,"type":"resume_set"}"#, #"{"latest":"","resumed":true,"token":"a b","type":"resume_set"}"#,
            #"{"resumed":true,"token":"T","type":"resume_set"}"#, #"{"latest":"A!","resumed":true,"token":"T","type":"resume_set"}"#,
            #"{"latest":"g","resumed":true,"token":"T","type":"resume_set"}"#, #"{"gaps":"C","latest":"AC","resumed":true,"token":"T","type":"resume_set"}"#,
            #"{"gaps":"BA","latest":"AC","resumed":true,"token":"T","type":"resume_set"}"#,
        ] {
            #expect(throws: CodecError.self) { try codec.decode(.text(text)) }
        }
    }
}

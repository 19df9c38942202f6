import SDK
import SDKTesting
import Testing

/// Version 3 on the server side: the set a connection leaves is kept under the token it was
/// given, resumed for the same credentials only, within its lifetime and the bound on how many
/// are kept, and never in place of another set.
@Suite("ServerCore: the resume set")
struct ServerCoreResumeSetTests {
    let codec = JSONWireCodec()
    final class Clock: @unchecked Sendable {
        // @unchecked: each test reads and moves it on one task, never concurrently.
        var now: Duration = .zero
    }

    func decoded(_ outputs: [ServerCore.Output]) -> [ServerMessage] {
        outputs.compactMap { output in
            guard case .send(_, let frame) = output else { return nil }
            return try? codec.decode(frame)
        }
    }

    func header(_ token: String, _ members: [TetherResumeSet.Member], _ positions: [TetherResumeSet.Position]) -> String {
        TetherResumeSet.Request(token: token, members: members, positions: positions)!.headerValue
    }

    /// Opens connection `id` on version 3 with `headers` (credentials "t"): its token, the
    /// `resume_set`'s answers to the set's members (nil: not resumed), and the frames after it.
    func open(
        _ core: inout ServerCore, _ id: ServerCore.ConnectionID, _ headers: [String: String] = [:], token: String = "t"
    ) -> (String?, answers: TetherResumeSet.Answers?, [ServerMessage]) {
        var all = headers
        all["Authorization"] = "Bearer \(token)"
        let answer = core.answerUpgrade(subprotocols: ["tether.v3", "tether.v2"], headers: all)
        let messages = decoded(core.connectionOpened(id, upgrade: answer))
        guard case .resumeSet(let issued, _, let answers)? = messages.first else { return (nil, nil, messages) }
        return (issued, answers, Array(messages.dropFirst()))
    }

    /// A core where connection 1 subscribed to `room` (at 2) and `news` (at 0), then closed: its token.
    func keptAfterClose(_ core: inout ServerCore) throws -> String {
        for text in ["a", "b"] { _ = try core.publish(.string(text), to: "room") }
        let (token, _, _) = open(&core, 1)
        _ = core.received(.text(#"{"type":"subscribe","id":1,"channel":"room"}"#), from: 1)
        _ = core.received(.text(#"{"type":"subscribe","id":2,"channel":"news"}"#), from: 1)
        core.connectionClosed(1)
        return try #require(token)
    }

    let members = [TetherResumeSet.Member(channel: "news", base: 0), TetherResumeSet.Member(channel: "room", base: 2)]

    @Test("the closed connection's set resumes: a new token first, answering each member in the set's order; then only what they missed; the named ones after, as in version 2")
    func resumes() throws {
        var core = ServerCore(.init(), now: { .zero })
        let token = try keptAfterClose(&core)
        _ = try core.publish("c", to: "room")
        let (next, answers, rest) = open(&core, 2, [
            "Tether-Resume-Set": header(token, members, [.live, .since(2)]), "Tether-Resume": "3;fresh",
        ])
        #expect(next != nil && next != token)
        let set = try #require(answers)
        // `news` live: its latest (0) from 0; `room` from 2: its latest (3) is one past.
        #expect(set.codes == [0, 2] && set.gaps.isEmpty)
        #expect(TetherResumeSet.Answers.latest(set.codes[1], from: 2) == 3)
        #expect(rest == [.message(ChannelMessage(channel: "room", sequence: 3, data: "c")), .ack(Ack(id: 3, sequence: 0))], "no ok for a member of the set")
        #expect(core.subscriberCount(of: "room") == 1 && core.subscriberCount(of: "fresh") == 1)
    }

    @Test("resume_set says false, and nothing of the set is answered, for: another token, other credentials, another set, an expired one")
    func notResumed() throws {
        let clock = Clock()
        var core = ServerCore(.init(resumeSetLifetime: .seconds(300)), now: { clock.now })
        let token = try keptAfterClose(&core)
        let cases: [(String, [String: String], String)] = [
            ("another token", ["Tether-Resume-Set": header("other", members, [.live, .live])], "t"),
            ("other credentials", ["Tether-Resume-Set": header(token, members, [.live, .live])], "u"),
            ("a member more", ["Tether-Resume-Set": header(token, members + [.init(channel: "x", base: 0)], [.live, .live, .live])], "t"),
            ("another base", ["Tether-Resume-Set": header(token, [members[0], .init(channel: "room", base: 1)], [.live, .live])], "t"),
        ]
        for (index, (name, headers, credentials)) in cases.enumerated() {
            let id = ServerCore.ConnectionID(10 + index)
            var all = headers
            all["Authorization"] = "Bearer \(credentials)"
            let answer = core.answerUpgrade(subprotocols: ["tether.v3"], headers: all)
            let messages = decoded(core.connectionOpened(id, upgrade: answer))
            #expect(messages.count == 1, "\(name)")
            guard case .resumeSet(_, let resumed, let answers)? = messages.first else {
                Issue.record("\(name): no resume_set first")
                continue
            }
            #expect(!resumed && answers == nil, "\(name)")
        }
        clock.now = .seconds(300)
        let (_, expired, after) = open(&core, 20, ["Tether-Resume-Set": header(token, members, [.live, .live])])
        #expect(expired == nil && after.isEmpty, "expired")
        clock.now = .seconds(299)
        let (_, within, _) = open(&core, 21, ["Tether-Resume-Set": header(token, members, [.live, .live])])
        #expect(within?.codes.count == 2, "within its lifetime")
    }

    @Test("a connection still open on the server (the client found it dead first) resumes with its set as it is now")
    func openConnection() throws {
        var core = ServerCore(.init(), now: { .zero })
        let (token, _, _) = open(&core, 1)
        _ = core.received(.text(#"{"type":"subscribe","id":1,"channel":"room"}"#), from: 1)
        let (_, answers, rest) = open(&core, 2, ["Tether-Resume-Set": header(try #require(token), [.init(channel: "room", base: 0)], [.since(0)])])
        #expect(answers?.codes == [0] && rest.isEmpty)
    }

    @Test("no more sets are kept than the bound: the oldest go first")
    func bounded() throws {
        var core = ServerCore(.init(maxResumeSets: 2), now: { .zero })
        var tokens: [String] = []
        for id in 1...3 as ClosedRange<ServerCore.ConnectionID> {
            let (token, _, _) = open(&core, id)
            _ = core.received(.text(#"{"type":"subscribe","id":1,"channel":"room"}"#), from: id)
            core.connectionClosed(id)
            tokens.append(try #require(token))
        }
        let room = [TetherResumeSet.Member(channel: "room", base: 0)]
        let answered = tokens.enumerated().map { index, token in
            open(&core, ServerCore.ConnectionID(10 + index), ["Tether-Resume-Set": header(token, room, [.live])]).answers?.codes.count ?? 0
        }
        #expect(answered == [0, 1, 1])
    }

    @Test("a malformed set, a named entry on an id the set takes or on one of its channels: 400")
    func refused() throws {
        var core = ServerCore(.init(), now: { .zero })
        let token = try keptAfterClose(&core)
        let offer = ["tether.v3"]
        for headers in [
            ["Tether-Resume-Set": "nope"],
            ["Tether-Resume-Set": header(token, members, [.live, .live]), "Tether-Resume": "2;fresh"],
            ["Tether-Resume-Set": header(token, members, [.live, .live]), "Tether-Resume": "3;room"],
        ] {
            var all = headers
            all["Authorization"] = "Bearer t"
            guard case .refuse(400, _) = core.answerUpgrade(subprotocols: offer, headers: all) else {
                Issue.record("not refused: \(headers)")
                continue
            }
        }
        #expect(core.answerUpgrade(subprotocols: offer, headers: ["Authorization": "Bearer t"]).subprotocol == "tether.v3")
        core.acceptsVersion3 = false
        #expect(core.answerUpgrade(subprotocols: ["tether.v3", "tether.v2"], headers: ["Authorization": "Bearer t"]).subprotocol == "tether.v2")
    }
}

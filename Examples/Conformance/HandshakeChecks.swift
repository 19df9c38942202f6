import SDK

/// Pipelining behind `auth` and version 2's resume in the upgrade request (`docs/PROTOCOL.md`).
extension ConformanceSuite {
    static let handshakeChecks: [Check] = [
        Check(name: "requests pipelined behind auth are applied in order, their answers after auth's ok") { target in
            let channel = "conformance-pipelined-\(UInt32.random(in: 0...UInt32.max))"
            let client = try await ProtocolClient.open(target)
            try await client.send(#"{"type":"auth","id":1,"token":"\#(target.token)"}"#)
            try await client.send(#"{"type":"subscribe","id":2,"channel":"\#(channel)"}"#)
            try await client.send(#"{"type":"publish","id":3,"channel":"\#(channel)","data":"p"}"#)
            let auth = try await client.next()
            try require(auth["type"] == "ok" && auth["id"]?.unsignedIntegerValue == 1, "auth answered \(auth)")
            let subscribed = try await client.next()
            try require(subscribed["type"] == "ok" && subscribed["id"]?.unsignedIntegerValue == 2 && subscribed["seq"]?.unsignedIntegerValue == 0, "subscribe answered \(subscribed)")
            var rest = [try await client.next(), try await client.next()]
            rest.sort { ($0["type"]?.stringValue ?? "") > ($1["type"]?.stringValue ?? "") }
            try require(rest[0]["type"] == "ok" && rest[0]["id"]?.unsignedIntegerValue == 3 && rest[0]["seq"]?.unsignedIntegerValue == 1, "publish answered \(rest[0])")
            try require(rest[1]["type"] == "message" && rest[1]["seq"]?.unsignedIntegerValue == 1, "the subscription got \(rest[1])")
            await client.close()
        },
        Check(name: "behind rejected credentials nothing is applied or answered: error unauthorized, close 4001") { target in
            let channel = "conformance-rejected-\(UInt32.random(in: 0...UInt32.max))"
            let client = try await ProtocolClient.open(target)
            try await client.send(#"{"type":"auth","id":1,"token":"conformance-token-the-server-must-reject"}"#)
            try await client.send(#"{"type":"subscribe","id":2,"channel":"\#(channel)"}"#)
            try await client.send(#"{"type":"publish","id":3,"channel":"\#(channel)","data":"must not be applied"}"#)
            let reply = try await client.next()
            try require(reply["type"] == "error" && reply["code"] == "unauthorized" && reply["id"]?.unsignedIntegerValue == 1, "auth answered \(reply)")
            try await client.expectClose(4001)
            await client.close()
            let checker = try await ProtocolClient.authenticated(target)
            try await checker.send(#"{"type":"subscribe","id":2,"channel":"\#(channel)","since":0}"#)
            let latest = try await checker.next()
            try require(latest["type"] == "ok" && latest["seq"]?.unsignedIntegerValue == 0, "the publish behind the rejected auth was applied: \(latest)")
            await checker.close()
        },
        Check(name: "version 2: bad credentials in the upgrade request are refused with HTTP 401") { target in
            let socket = try await RawWebSocket.connect(host: target.host, port: target.port)
            let answer = try await socket.upgradeAnswer(host: target.host, port: target.port, extraHeaders: [
                "Sec-WebSocket-Protocol: tether.v2", "Authorization: Bearer conformance-token-the-server-must-reject",
            ])
            try require(answer.status == 401, "answered \(answer.status)")
            await socket.close()
        },
        Check(name: "version 2: the 101 chooses tether.v2 and the carried subscriptions' oks and catch-up follow it, in order") { target in
            let channel = "conformance-v2-\(UInt32.random(in: 0...UInt32.max))"
            let publisher = try await ProtocolClient.authenticated(target)
            for n in 1...2 {
                try await publisher.send(#"{"type":"publish","id":\#(n + 1),"channel":"\#(channel)","data":\#(n)}"#)
                _ = try await publisher.next()
            }
            await publisher.close()
            let socket = try await RawWebSocket.connect(host: target.host, port: target.port)
            let answer = try await socket.upgradeAnswer(host: target.host, port: target.port, extraHeaders: [
                "Sec-WebSocket-Protocol: tether.v2", "Authorization: Bearer \(target.token)", "Tether-Resume: 1;\(channel);0,2;\(channel)-quiet",
            ])
            try require(answer.status == 101, "answered \(answer.status)")
            try require(answer.head.lowercased().contains("sec-websocket-protocol: tether.v2"), "the 101 did not choose tether.v2:\n\(answer.head)")
            let client = ProtocolClient(socket: socket, target: target)
            let first = try await client.next()
            try require(first["type"] == "ok" && first["id"]?.unsignedIntegerValue == 1 && first["seq"]?.unsignedIntegerValue == 2, "first answered \(first)")
            for n in 1...2 {
                let message = try await client.next()
                try require(message["type"] == "message" && message["seq"]?.unsignedIntegerValue == UInt64(n), "catch-up \(n) was \(message)")
            }
            let second = try await client.next()
            try require(second["type"] == "ok" && second["id"]?.unsignedIntegerValue == 2, "second answered \(second)")
            try await client.send(#"{"type":"ping","id":3}"#)
            let pong = try await client.next()
            try require(pong["type"] == "pong", "authenticated by the upgrade: a ping answered \(pong)")
            await client.close()
        },
        Check(name: "version 3: resume_set comes first with a token; the set a connection leaves resumes by it, each position as its distance from the ok's seq; resume_set itself answers the set (each member's latest from its since), then only the missed messages, no ok") { target in
            let channel = "conformance-v3-\(UInt32.random(in: 0...UInt32.max))"
            let (first, token, _) = try await openVersion3(target, set: nil, resumed: false)
            try await first.send(#"{"type":"subscribe","id":1,"channel":"\#(channel)"}"#)
            let base = try await first.next()
            try require(base["type"] == "ok" && base["seq"]?.unsignedIntegerValue == 0, "subscribe answered \(base)")
            await first.close()
            let publisher = try await ProtocolClient.authenticated(target)
            for n in 1...2 {
                try await publisher.send(#"{"type":"publish","id":\#(n + 1),"channel":"\#(channel)","data":\#(n)}"#)
                _ = try await publisher.next()
            }
            await publisher.close()
            let set = TetherResumeSet.Request(token: token, members: [.init(channel: channel, base: 0)], positions: [.since(0)])
            let (second, next, answer) = try await openVersion3(target, set: set?.headerValue, resumed: true)
            try require(next != token, "the same token for another connection")
            // The one member's latest (2) from the since sent (0): distance 2, zigzag 4, "E"; no gap.
            try require(answer["latest"]?.stringValue == "E" && answer["gaps"] == nil, "the set answered \(answer), not latest \"E\" without gaps")
            for n in 1...2 {
                let message = try await second.next()
                try require(message["type"] == "message" && message["seq"]?.unsignedIntegerValue == UInt64(n), "catch-up \(n) was \(message)")
            }
            try await second.send(#"{"type":"ping","id":9}"#)
            let after = try await second.next()
            try require(after["type"] == "pong" && after["id"]?.unsignedIntegerValue == 9, "after the catch-up came \(after), not the ping's pong: no ok answers a member of the set")
            await second.close()
            let unknown = TetherResumeSet.Request(token: "conformance-unknown-token", members: [.init(channel: channel, base: 0)], positions: [.since(0)])
            let (third, _, _) = try await openVersion3(target, set: unknown?.headerValue, resumed: false)
            try await third.send(#"{"type":"ping","id":2}"#)
            let pong = try await third.next()
            try require(pong["type"] == "pong" && pong["id"]?.unsignedIntegerValue == 2, "an unknown token answers nothing of the set: \(pong)")
            await third.close()
        },
    ]

    /// A version-3 connection (with `set` as its `Tether-Resume-Set`), checked to begin with a
    /// `resume_set` saying `resumed`: the client, the token it was given, and that first frame.
    static func openVersion3(_ target: Target, set: String?, resumed: Bool) async throws -> (ProtocolClient, String, JSONValue) {
        let socket = try await RawWebSocket.connect(host: target.host, port: target.port)
        var headers = ["Sec-WebSocket-Protocol: tether.v3, tether.v2", "Authorization: Bearer \(target.token)"]
        if let set { headers.append("Tether-Resume-Set: \(set)") }
        let answer = try await socket.upgradeAnswer(host: target.host, port: target.port, extraHeaders: headers)
        try require(answer.status == 101, "answered \(answer.status)")
        try require(answer.head.lowercased().contains("sec-websocket-protocol: tether.v3"), "the 101 did not choose tether.v3:\n\(answer.head)")
        let client = ProtocolClient(socket: socket, target: target)
        let first = try await client.next()
        try require(first["type"] == "resume_set" && first["resumed"]?.boolValue == resumed, "the first frame was \(first), not resume_set with resumed \(resumed)")
        guard let token = first["token"]?.stringValue, TetherResumeSet.isToken(Substring(token)) else { throw Violation("no base-64url token in \(first)") }
        return (client, token, first)
    }
}

import SDK

/// The MUSTs of `docs/PROTOCOL.md` about messages, one check each.
extension ConformanceSuite {
    static let protocolChecks: [Check] = [
        Check(name: "auth with an accepted token is answered ok with its id") { target in
            let client = try await ProtocolClient.authenticated(target)
            await client.close()
        },
        Check(name: "a rejected token is answered error unauthorized with its id, then close 4001") { target in
            let client = try await ProtocolClient.open(target)
            try await client.send(#"{"type":"auth","id":5,"token":"conformance-token-the-server-must-reject"}"#)
            let reply = try await client.next()
            try require(reply["type"] == "error" && reply["code"] == "unauthorized" && reply["id"]?.unsignedIntegerValue == 5, "answered \(reply)")
            try await client.expectClose(4001)
            await client.close()
        },
        Check(name: "a first message other than auth is answered bad_request and closed with 4400; a later auth is not applied") { target in
            for first in [#"not json"#, #"{"type":"nope","id":2}"#, #"{"type":"ping","id":3}"#] {
                let client = try await ProtocolClient.open(target)
                try await client.send(first)
                let reply = try await client.next()
                try require(reply["type"] == "error" && reply["code"] == "bad_request", "'\(first)' answered \(reply)")
                // A server that already closed cannot apply it: a send that fails is a pass.
                try? await client.send(#"{"type":"auth","id":9,"token":"\#(target.token)"}"#)
                try await client.expectClose(4400)
                await client.close()
            }
            let binary = try await ProtocolClient.open(target)
            try await binary.socket.sendFrame(opcode: 0x2, Array("{}".utf8))
            let reply = try await binary.next()
            try require(reply["type"] == "error" && reply["code"] == "bad_request", "a binary first frame answered \(reply)")
            try await binary.expectClose(4400)
            await binary.close()
        },
        Check(name: "an error names the request whenever its id is readable") { target in
            let client = try await ProtocolClient.authenticated(target)
            let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
            let cases: [(String, UInt64)] = [
                (#"{"type":"nope","id":21}"#, 21),
                (#"{"type":"subscribe","id":22,"channel":""}"#, 22),
                (#"{"type":"subscribe","id":23,"channel":"\#(String(repeating: "c", count: 257))"}"#, 23),
                (#"{"type":"publish","id":24,"channel":"c"}"#, 24),
                (#"{"type":"publish","id":25,"channel":"c","data":\#(deep)}"#, 25),
            ]
            for (frame, id) in cases {
                try await client.send(frame)
                let reply = try await client.next()
                try require(reply["type"] == "error" && reply["id"]?.unsignedIntegerValue == id, "\(frame.prefix(60)) answered \(reply)")
            }
            await client.close()
        },
        Check(name: "a malformed frame after auth is answered bad_request; the connection stays and answers") { target in
            let client = try await ProtocolClient.authenticated(target)
            try await client.send("{not json")
            let reply = try await client.next()
            try require(reply["type"] == "error" && reply["code"] == "bad_request", "answered \(reply)")
            try await client.send(#"{"type":"ping","id":31}"#)
            let pong = try await client.next()
            try require(pong["type"] == "pong" && pong["id"]?.unsignedIntegerValue == 31, "ping answered \(pong)")
            await client.close()
        },
        Check(name: "a second auth is answered bad_request") { target in
            let client = try await ProtocolClient.authenticated(target)
            try await client.send(#"{"type":"auth","id":2,"token":"\#(target.token)"}"#)
            let reply = try await client.next()
            try require(reply["type"] == "error" && reply["code"] == "bad_request" && reply["id"]?.unsignedIntegerValue == 2, "answered \(reply)")
            await client.close()
        },
        Check(name: "ping is answered pong with its id") { target in
            let client = try await ProtocolClient.authenticated(target)
            try await client.send(#"{"type":"ping","id":77}"#)
            let reply = try await client.next()
            try require(reply["type"] == "pong" && reply["id"]?.unsignedIntegerValue == 77, "answered \(reply)")
            await client.close()
        },
        Check(name: "publish is acknowledged with the message's number; subscribers get it with that number, in order") { target in
            let channel = "conformance-order-\(UInt32.random(in: 0...UInt32.max))"
            let subscriber = try await ProtocolClient.authenticated(target)
            try await subscriber.send(#"{"type":"subscribe","id":2,"channel":"\#(channel)"}"#)
            let ok = try await subscriber.next()
            try require(ok["type"] == "ok" && ok["id"]?.unsignedIntegerValue == 2 && ok["seq"]?.unsignedIntegerValue == 0, "subscribe answered \(ok)")
            let publisher = try await ProtocolClient.authenticated(target)
            for n in 1...5 {
                try await publisher.send(#"{"type":"publish","id":\#(n + 10),"channel":"\#(channel)","data":{"n":\#(n)}}"#)
                let ack = try await publisher.next()
                try require(ack["type"] == "ok" && ack["id"]?.unsignedIntegerValue == UInt64(n + 10) && ack["seq"]?.unsignedIntegerValue == UInt64(n), "publish \(n) answered \(ack)")
            }
            for n in 1...5 {
                let message = try await subscriber.next()
                try require(message["type"] == "message" && message["channel"]?.stringValue == channel && message["seq"]?.unsignedIntegerValue == UInt64(n)
                    && message["data"] == ["n": JSONValue(n)], "message \(n) arrived as \(message)")
            }
            await publisher.close()
            await subscriber.close()
        },
        Check(name: "subscribe with since: the ok comes first, then every retained message after it, in order, without a gap") { target in
            let channel = "conformance-since-\(UInt32.random(in: 0...UInt32.max))"
            let publisher = try await ProtocolClient.authenticated(target)
            for n in 1...6 {
                try await publisher.send(#"{"type":"publish","id":\#(n + 1),"channel":"\#(channel)","data":\#(n)}"#)
                _ = try await publisher.next()
            }
            try await publisher.send(#"{"type":"subscribe","id":40,"channel":"\#(channel)","since":2}"#)
            let ok = try await publisher.next()
            try require(ok["type"] == "ok" && ok["id"]?.unsignedIntegerValue == 40 && ok["seq"]?.unsignedIntegerValue == 6 && (ok["gap"] ?? false) == false, "subscribe since 2 answered \(ok)")
            for n in 3...6 {
                let message = try await publisher.next()
                try require(message["type"] == "message" && message["seq"]?.unsignedIntegerValue == UInt64(n), "catch-up message \(n) arrived as \(message)")
            }
            await publisher.close()
        },
        Check(name: "numbers arrive as sent: 64-bit integers exactly, other numbers with their value") { target in
            let channel = "conformance-numbers-\(UInt32.random(in: 0...UInt32.max))"
            let client = try await ProtocolClient.authenticated(target)
            try await client.send(#"{"type":"subscribe","id":2,"channel":"\#(channel)"}"#)
            _ = try await client.next()
            let data = #"{"u":18446744073709551615,"s":12345678901234567890,"i":-9223372036854775808,"p":9007199254740993,"x":1e300,"d":0.1,"f":-2.5e-7}"#
            try await client.send(#"{"type":"publish","id":3,"channel":"\#(channel)","data":\#(data)}"#)
            var message: JSONValue = .null
            for _ in 0..<2 {
                let next = try await client.next()
                if next["type"] == "message" { message = next }
            }
            let sent = try ProtocolClient.parse(data)
            let got = message["data"] ?? .null
            for key in ["u", "s", "i", "p"] {
                try require(got[key]?.unsignedIntegerValue == sent[key]?.unsignedIntegerValue && got[key]?.integerValue == sent[key]?.integerValue,
                            "'\(key)' was \(sent[key]?.description ?? "?"), arrived as \(got[key]?.description ?? "nothing")")
            }
            for key in ["x", "d", "f"] {
                try require(got[key]?.numberValue == sent[key]?.numberValue, "'\(key)' was \(sent[key]?.description ?? "?"), arrived as \(got[key]?.description ?? "nothing")")
            }
            await client.close()
        },
        Check(name: "a publish of exactly 1 MiB is either refused with its id, or acknowledged and delivered: never acknowledged and lost") { target in
            let channel = "conformance-big-\(UInt32.random(in: 0...UInt32.max))"
            let client = try await ProtocolClient.authenticated(target)
            try await client.send(#"{"type":"subscribe","id":2,"channel":"\#(channel)"}"#)
            _ = try await client.next()
            let bare = #"{"type":"publish","id":3,"channel":"\#(channel)","data":""}"#
            let frame = #"{"type":"publish","id":3,"channel":"\#(channel)","data":""# + String(repeating: "x", count: (1 << 20) - bare.utf8.count) + #""}"#
            try require(frame.utf8.count == 1 << 20, "the check's own frame is \(frame.utf8.count) bytes")
            try await client.send(frame)
            let reply = try await client.next(within: .seconds(10))
            if reply["type"] == "ok" {
                let message = try await client.next(within: .seconds(10))
                try require(message["type"] == "message" && message["seq"] == reply["seq"], "acknowledged as \(reply) but then \(message.description.prefix(80))")
            } else {
                try require(reply["type"] == "error" && reply["id"]?.unsignedIntegerValue == 3, "answered \(reply)")
            }
            try await client.send(#"{"type":"ping","id":4}"#)
            try require(try await client.next()["type"] == "pong", "no pong after the large publish")
            await client.close()
        },
        Check(name: "a publish re-sent with the same key is applied once and acknowledged with the first number") { target in
            let channel = "conformance-key-\(UInt32.random(in: 0...UInt32.max))"
            let key = "conformance-\(UInt64.random(in: 0...UInt64.max))"
            let client = try await ProtocolClient.authenticated(target)
            try await client.send(#"{"type":"subscribe","id":2,"channel":"\#(channel)"}"#)
            _ = try await client.next()
            var acks: [JSONValue] = []
            var messages = 0
            for id in [3, 4] {
                try await client.send(#"{"type":"publish","id":\#(id),"channel":"\#(channel)","data":"once","key":"\#(key)"}"#)
            }
            try await client.send(#"{"type":"ping","id":5}"#)
            while true {
                let next = try await client.next()
                if next["type"] == "pong" { break }
                if next["type"] == "ok" { acks.append(next) }
                if next["type"] == "message" { messages += 1 }
            }
            try require(acks.count == 2 && acks[0]["seq"] == acks[1]["seq"], "acknowledged as \(acks)")
            try require(messages == 1, "delivered \(messages) times")
            await client.close()
        },
    ]
}

import SDK
import SDKTesting
import Testing

/// The reference server's rules, as the review found them broken (items 9.7, 9.10, 9.11) and
/// the exactly-once publish: table by table on the pure core.
@Suite("ServerCore")
struct ServerCoreTests {
    let codec = JSONWireCodec()

    /// A core with one connection (1) authenticated, optionally a second (2) subscribed to "room".
    func core(subscriber: Bool = false, now: @escaping @Sendable () -> Duration = { .zero }) -> ServerCore {
        var core = ServerCore(.init(), now: now)
        core.connectionOpened(1)
        _ = core.received(.text(#"{"type":"auth","id":1,"token":"t"}"#), from: 1)
        if subscriber {
            core.connectionOpened(2)
            _ = core.received(.text(#"{"type":"auth","id":1,"token":"t"}"#), from: 2)
            _ = core.received(.text(#"{"type":"subscribe","id":2,"channel":"room"}"#), from: 2)
        }
        return core
    }

    func decoded(_ outputs: [ServerCore.Output]) -> [ServerMessage] {
        outputs.compactMap { output in
            guard case .send(_, let frame) = output else { return nil }
            return try? codec.decode(frame)
        }
    }

    static let refusedFrames: [(String, RequestID?)] = {
        let longChannel = String(repeating: "c", count: 257)
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        return [
            (#"{"type":"nope","id":7}"#, 7),
            (#"{"type":"subscribe","id":8,"channel":""}"#, 8),
            (#"{"type":"subscribe","id":9,"channel":"\#(longChannel)"}"#, 9),
            (#"{"type":"publish","id":10,"channel":"c"}"#, 10),
            (#"{"type":"publish","id":11,"channel":"c","data":\#(deep)}"#, 11),
            (#"{"type":"publish","id":12,"channel":"c","data":1,"key":""}"#, 12),
            (#"{"type":"publish","channel":"c","data":1}"#, nil),
            ("not json", nil),
        ]
    }()

    @Test("an error names the request whenever its id was readable", arguments: refusedFrames)
    func errorsEchoTheID(frame: String, id: RequestID?) throws {
        var core = core()
        let replies = decoded(core.received(.text(frame), from: 1))
        guard case .error(let error)? = replies.first, replies.count == 1 else {
            Issue.record("expected one error, got \(replies)")
            return
        }
        #expect(error.id == id)
        #expect(error.code == "bad_request")
    }

    @Test(
        "a first message other than auth gets bad_request and close 4400; a later auth is not applied",
        arguments: [TransportFrame.text("not json"), .text(#"{"type":"nope","id":1}"#), .binary([0x7B, 0x7D]), .text(#"{"type":"ping","id":3}"#)]
    )
    func firstMessageMustBeAuth(frame: TransportFrame) {
        var core = ServerCore()
        core.connectionOpened(1)
        let outputs = core.received(frame, from: 1)
        #expect(outputs.contains(.close(1, .badRequest, reason: "authenticate first")), "\(outputs)")
        guard case .error(let error)? = decoded(outputs).first else {
            Issue.record("no error reply: \(outputs)")
            return
        }
        #expect(error.code == "bad_request")
        #expect(core.received(.text(#"{"type":"auth","id":2,"token":"t"}"#), from: 1) == [])
    }

    @Test("a publish of exactly 1 MiB whose message would exceed the limit is refused before it gets a number")
    func oversizeMessageIsRefusedNotLost() throws {
        var core = core(subscriber: true)
        // Pad a publish frame to exactly 1,048,576 bytes; the message frame it makes is longer
        // ("seq":N is longer than "id":N), so it cannot be delivered.
        let bare = try codec.encode(ClientMessage.publish(id: 1, channel: "room", data: ""))
        guard case .text(let bareText) = bare else { return }
        let frame = try codec.encode(ClientMessage.publish(id: 1, channel: "room", data: .string(String(repeating: "x", count: (1 << 20) - bareText.utf8.count))))
        guard case .text(let text) = frame else { return }
        #expect(text.utf8.count == 1 << 20)
        let replies = decoded(core.received(frame, from: 1))
        #expect(replies.count == 1)
        guard case .error(let error)? = replies.first else {
            Issue.record("an oversize message was acknowledged: \(replies)")
            return
        }
        #expect(error.id == 1)
        #expect(error.code == "too_large")
        #expect(core.latestSequence(of: "room") == 0, "the refused message took no number")
        // The next message is delivered with the next number; catch-up reports no gap.
        let next = decoded(core.received(.text(#"{"type":"publish","id":2,"channel":"room","data":"ok"}"#), from: 1))
        #expect(next.contains(.ack(Ack(id: 2, sequence: 1))))
        #expect(next.contains(.message(ChannelMessage(channel: "room", sequence: 1, data: "ok"))))
    }

    @Test("every acknowledged message is delivered on catch-up, byte for byte as it was first sent")
    func catchUpDeliversWhatWasAcknowledged() throws {
        var core = core()
        let sent = [#"{"type":"publish","id":2,"channel":"room","data":{"big":12345678901234567890,"x":1e300,"s":"\b\f"}}"#, #"{"type":"publish","id":3,"channel":"room","data":0.1}"#]
        var live: [TransportFrame] = []
        core.connectionOpened(2)
        _ = core.received(.text(#"{"type":"auth","id":1}"#), from: 2)
        _ = core.received(.text(#"{"type":"subscribe","id":2,"channel":"room"}"#), from: 2)
        for frame in sent {
            for case .send(2, let message) in core.received(.text(frame), from: 1) { live.append(message) }
        }
        #expect(live.count == 2)
        let replay = core.received(.text(#"{"type":"subscribe","id":4,"channel":"room","since":0}"#), from: 1)
        let frames = replay.compactMap { output -> TransportFrame? in if case .send(_, let frame) = output { frame } else { nil } }
        #expect(Array(frames.dropFirst()) == live)
        #expect(decoded(Array(replay.prefix(1))) == [.ack(Ack(id: 4, sequence: 2, gap: false))])
    }

    @Test("a publish re-sent with the same key is applied once, acknowledged with the first number")
    func idempotentPublish() {
        let clock = Locked(Duration.zero)
        var core = core(subscriber: true, now: { clock.withLock { $0 } })
        let first = decoded(core.received(.text(#"{"type":"publish","id":2,"channel":"room","data":"a","key":"k1"}"#), from: 1))
        #expect(first.contains(.ack(Ack(id: 2, sequence: 1))))
        #expect(first.contains(.message(ChannelMessage(channel: "room", sequence: 1, data: "a"))))
        clock.withLock { $0 = .seconds(119) }
        let again = decoded(core.received(.text(#"{"type":"publish","id":9,"channel":"room","data":"a","key":"k1"}"#), from: 1))
        #expect(again == [.ack(Ack(id: 9, sequence: 1))], "no second delivery")
        // Another key, and a publish without one, are new messages.
        #expect(decoded(core.received(.text(#"{"type":"publish","id":3,"channel":"room","data":"b","key":"k2"}"#), from: 1)).contains(.ack(Ack(id: 3, sequence: 2))))
        #expect(decoded(core.received(.text(#"{"type":"publish","id":4,"channel":"room","data":"c"}"#), from: 1)).contains(.ack(Ack(id: 4, sequence: 3))))
        // Past the window the key is forgotten (documented: 120 s).
        clock.withLock { $0 = .seconds(250) }
        #expect(decoded(core.received(.text(#"{"type":"publish","id":5,"channel":"room","data":"a","key":"k1"}"#), from: 1)).contains(.ack(Ack(id: 5, sequence: 4))))
    }

    @Test("the deduplication window ends exactly 120 s after the key was first applied: after it, a re-send is a new message")
    func deduplicationWindowEnds() {
        let clock = Locked(Duration.zero)
        var core = core(subscriber: true, now: { clock.withLock { $0 } })
        let publish = #"{"type":"publish","id":2,"channel":"room","data":"a","key":"k1"}"#
        #expect(decoded(core.received(.text(publish), from: 1)).contains(.ack(Ack(id: 2, sequence: 1))))
        clock.withLock { $0 = .seconds(120) }
        #expect(decoded(core.received(.text(publish), from: 1)) == [.ack(Ack(id: 2, sequence: 1))], "still within the window at 120 s")
        clock.withLock { $0 = .seconds(120) + .milliseconds(1) }
        let late = decoded(core.received(.text(publish), from: 1))
        #expect(late.contains(.ack(Ack(id: 2, sequence: 2))), "past the window the key is forgotten: applied again")
        #expect(late.contains(.message(ChannelMessage(channel: "room", sequence: 2, data: "a"))), "and delivered again")
        #expect(decoded(core.received(.text(publish), from: 1)) == [.ack(Ack(id: 2, sequence: 2))], "remembered anew from then on")
    }

    @Test("a channel remembers at most maxKeysPerChannel keys")
    func keyMemoryIsBounded() {
        var core = ServerCore(.init(maxKeysPerChannel: 2), now: { .zero })
        core.connectionOpened(1)
        _ = core.received(.text(#"{"type":"auth","id":1}"#), from: 1)
        for (index, key) in ["a", "b", "c"].enumerated() {
            _ = core.received(.text(#"{"type":"publish","id":\#(index + 2),"channel":"r","data":1,"key":"\#(key)"}"#), from: 1)
        }
        // "a" was forgotten (applied again); "c" is remembered.
        #expect(decoded(core.received(.text(#"{"type":"publish","id":9,"channel":"r","data":1,"key":"a"}"#), from: 1)) == [.ack(Ack(id: 9, sequence: 4))])
        #expect(decoded(core.received(.text(#"{"type":"publish","id":10,"channel":"r","data":1,"key":"c"}"#), from: 1)) == [.ack(Ack(id: 10, sequence: 3))])
    }
}

@testable import SDK
import ConnectionPolicy
import Foundation
import SDKTesting
import Testing

/// The core knows no protocol's positions: a protocol written here, in the test, whose positions
/// are opaque cursors, resumes from the last one delivered after a reconnect — no line of
/// `Session` knows what a cursor is.
@Suite("Session: a protocol with opaque positions", .timeLimit(.minutes(1)))
struct SessionOpaquePositionTests {
    /// A line protocol: `sub <channel> <cursor|->` out; `msg <cursor> <text>` in, for the one
    /// channel subscribed. Ready at once, no acknowledgements.
    struct CursorProtocol: WireProtocolDescription {
        var capabilities: WireCapabilities {
            WireCapabilities(publishAcknowledgement: .none, resumesSubscriptions: true, liveness: .serverPing, canProbe: false)
        }
        var subprotocols: [String] { [] }
        func makeConnectionMachine() -> any WireMachine { Machine() }
        func ending(code: CloseCode?, reason: String) -> WireEnding { WireEnding(.serverClosed(reason), .retry) }

        struct Machine: WireMachine {
            var subscription: SubscriptionID?
            mutating func start(credentials: Secret?) -> [WireAction] { [.ready] }
            mutating func receive(_ frame: TransportFrame) -> [WireAction] {
                guard case .text(let text) = frame, let subscription else { return [] }
                let parts = text.split(separator: " ", maxSplits: 2).map(String.init)
                guard parts.count == 3, parts[0] == "msg" else { return [] }
                return [.delivery(subscription, .string(parts[2]), position: .opaque(parts[1]))]
            }
            mutating func perform(_ command: WireCommand) -> [WireAction] {
                guard case .subscribe(let id, let topic, let resume) = command else { return [] }
                subscription = id
                let cursor = resume?.token ?? "-"
                return [.send(.text("sub \(topic.name) \(cursor)")), .subscribed(id, resume == nil ? .live(at: nil) : .caughtUp(to: nil))]
            }
            mutating func timerFired(_ timer: WireTimer) -> [WireAction] { [] }
        }
    }

    @Test("the resubscribe after a reconnect carries the last opaque cursor delivered")
    func resumesFromTheLastCursor() async throws {
        let clock = TestClock()
        let transport = ScriptedTransport(subprotocol: nil)
        let settings = try AppSettings.testing { $0.serverProtocol(.adapter(CursorProtocol(), name: "cursor")) }
        let session = Session(settings: settings, transport: transport, clock: clock)
        let log = ScriptedLog(transport)
        try await withRunningSession(session) { status in
            try await status.waitFor(.connected)
            let room = try await session.subscribe(to: "room")
            #expect(await log.nextSent() == "sub room -")
            var messages = room.makeAsyncIterator()
            transport.push("msg c-41 hello")
            transport.push("msg c-42 again")
            #expect(try await messages.next()?.data == "hello")
            let again = try await messages.next()
            #expect(again?.data == "again" && again?.position == .opaque("c-42") && again?.sequence == nil, "the app sees the protocol's cursor")
            #expect(session.channelPositions["room"] == .some(.opaque("c-42")))
            await clock.advance(by: .seconds(6))  // a working connection: its loss is retried at once
            transport.closeFromServer(nil)
            #expect(await log.nextSent() == "sub room c-42", "resumed from the last cursor the app got")
            #expect(session.subscribedChannels["room"] == .some(nil), "no sequence number to show")
        }
    }
}

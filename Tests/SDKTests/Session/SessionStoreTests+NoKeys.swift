@testable import SDK
import ConnectionPolicy
import Foundation
import SDKTesting
import Testing

extension SessionStoreTests {
    /// A line protocol with publish acknowledgements and no idempotency keys: `pub <request>
    /// <json>` out, `ack <request>` in. A re-send would be a second publish.
    struct NoKeyProtocol: WireProtocolDescription {
        var capabilities: WireCapabilities {
            WireCapabilities(publishAcknowledgement: .always, resumesSubscriptions: false, liveness: .serverPing, canProbe: false, deduplicatesPublishes: false)
        }
        var subprotocols: [String] { [] }
        func makeConnectionMachine() -> any WireMachine { Machine() }
        func ending(code: CloseCode?, reason: String) -> WireEnding { WireEnding(.serverClosed(reason), .retry) }

        struct Machine: WireMachine {
            mutating func start(credentials: Secret?) -> [WireAction] { [.ready] }
            mutating func receive(_ frame: TransportFrame) -> [WireAction] {
                guard case .text(let text) = frame, text.hasPrefix("ack "), let id = RequestID(text.dropFirst(4)) else { return [] }
                return [.replied(id, .success(.acknowledged(position: nil, payload: nil)))]
            }
            mutating func perform(_ command: WireCommand) -> [WireAction] {
                guard case .publish(let id, _, let data, _) = command else { return [] }
                return [.send(.text("pub \(id) \(JSONWriter.text(data))"))]
            }
            mutating func timerFired(_ timer: WireTimer) -> [WireAction] { [] }
        }
    }

    @Test("no idempotency keys: a publish on the wire when the app was killed is not re-sent blindly; the app retries or dismisses it")
    func mayHaveBeenApplied() async throws {
        let store = InMemorySessionStore()
        let settings = { (store: any SessionStore) in try AppSettings.testing { $0.serverProtocol(.adapter(NoKeyProtocol(), name: "no-keys")).store(store) } }
        // What the store held as each frame went out. The write of "it went out" gives a frame
        // sent early 300 ms to show up (a frame that waits for the write, as it must, never does).
        let recordedAtSend = Locked<[Bool]>([])
        let frameSent = DispatchSemaphore(value: 0)
        let transport = ScriptedTransport { _ in
            recordedAtSend.withLock { $0.append(store.records.contains { String(decoding: $0, as: UTF8.self).contains("publishSent") }) }
            frameSent.signal()
        }
        let slowStore = SlowSentRecordStore(store, frameSent: frameSent)
        let log = ScriptedLog(transport)
        let first = Session(settings: try settings(slowStore), transport: transport, clock: clock)
        try await withRunningSession(first) { status in
            try await status.waitFor(.connected)
            _ = Task { try await first.publish("maybe", to: "room") }
            let sent = try #require(await log.nextSent())
            #expect(sent.hasSuffix(#" "maybe""#))
            #expect(recordedAtSend.withLock { $0 } == [true], "recorded as sent before it went")
            store.kill()
        }
        let again = ScriptedTransport()
        let relaunchedLog = ScriptedLog(again)
        let second = Session(settings: try settings(store.relaunched()), transport: again, clock: clock)
        try await withRunningSession(second) { status in
            let outcomes = PatientReader(second.earlierPublishOutcomes)
            try await status.waitFor(.connected)
            let earlier = await second.earlierPublishes
            #expect(earlier.map(\.state) == [.mayHaveBeenApplied] && second.outboxCount == 0, "held, not sent")
            let id = try #require(earlier.first?.id)
            try await second.retryPublish(id)
            let resent = try #require(await relaunchedLog.nextSent())
            #expect(resent.hasSuffix(#" "maybe""#))
            again.push("ack " + resent.split(separator: " ")[1])
            #expect(try #require(await outcomes.next()).state == .acknowledged(PublishReceipt(.acknowledged)))
            try await second.dismissPublish(id)
            #expect(await second.earlierPublishes.isEmpty)
            await #expect(throws: SessionError.self, "unknown now") { try await second.retryPublish(id) }
        }
    }
}

/// Wraps a store: an append that records a publish as sent waits up to 300 ms of real time for a
/// frame to go out first — which write-ahead forbids. A correct session only pays the wait.
final class SlowSentRecordStore: SessionStore {
    let inner: InMemorySessionStore
    let frameSent: DispatchSemaphore

    init(_ inner: InMemorySessionStore, frameSent: DispatchSemaphore) {
        self.inner = inner
        self.frameSent = frameSent
    }

    func load() throws(SessionStoreError) -> StoredRecords { try inner.load() }

    func append(_ records: [Data]) throws(SessionStoreError) {
        if records.contains(where: { String(decoding: $0, as: UTF8.self).contains("publishSent") }) {
            _ = frameSent.wait(timeout: .now() + .milliseconds(300))
        }
        try inner.append(records)
    }

    func replace(with records: [Data]) throws(SessionStoreError) { try inner.replace(with: records) }

    func close() { inner.close() }
}

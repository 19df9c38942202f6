import Foundation
@testable import SDK
import Testing

/// Folding store records into what a relaunch starts from, and compacting it back: the state
/// rebuilt from its few records is the same state, and their count is known without building them.
@Suite("Store records: folding and compaction")
struct StoreRecordTests {
    static func publish(_ key: String) -> StoreRecord {
        .publish(StoredPublishRecord(key: key, channel: "room", json: #"{"n":1}"#, createdAt: 1_000))
    }

    @Test("after every change, the compacted records rebuild the same state, and recordCount says how many there are")
    func compaction() {
        let history: [StoreRecord] = [
            Self.publish("a"), Self.publish("b"), Self.publish("c"), Self.publish("a"),
            .publishSent(key: "a"), .publishSent(key: "a"), .publishSent(key: "b"), .publishSent(key: "nobody"),
            .publishEnded(key: "a", outcome: .acknowledged(position: .sequence(4), unconfirmed: false)),
            .publishEnded(key: "a", outcome: .failed(code: "rejected", message: "no")),
            .publishEnded(key: "c", outcome: .failed(code: "timedOut", message: "late")),
            .position(channel: "room", position: .sequence(3)), .position(channel: "lobby", position: nil),
            .finished(channel: "room", position: .sequence(2), at: 5),
            .publishDismissed(key: "a"), .publishDismissed(key: "a"), .publishDismissed(key: "c"),
            .wireState(nil), .channelDropped(channel: "room"), .publishSent(key: "b"),
        ]
        var folded = StoredSession()
        for (step, record) in history.enumerated() {
            folded.apply(record)
            let records = folded.records
            #expect(folded.recordCount == records.count, "after step \(step + 1) (\(record))")
            #expect(StoredSession(records) == folded, "after step \(step + 1) (\(record))")
        }
        #expect(folded.publishes.map(\.record.key) == ["b"] && folded.publishes.first?.wasSent == true)
        #expect(folded.positions.keys.sorted() == ["lobby"] && folded.positions["lobby"] == .some(.none) && folded.finished.isEmpty)
    }

    @Test("the records written by hand read back as written, and are the JSON Codable makes of them", arguments: [
        "plain", "", #"a "quoted" \\ back\slash"#, "line\nbreak\ttab\r\u{08}\u{0C}\u{01}\u{1F}", "é ü 日本 🚇", "/slash/",
    ])
    func handWritten(_ text: String) throws {
        let records: [StoreRecord] = [
            .publish(StoredPublishRecord(key: text, channel: text, json: #"{"text":"# + text.debugDescription + "}", createdAt: -1_700_000_000_123)),
            .publish(StoredPublishRecord(key: "k", channel: "room", json: text, createdAt: .max)),
            .publishSent(key: text),
        ]
        for record in records {
            #expect(StoreRecord.decoded(record.encoded()) == record, "\(record)")
            let byHand = try JSONSerialization.jsonObject(with: record.encoded()) as? NSDictionary
            let byCodable = try JSONSerialization.jsonObject(with: record.encodedByCodable()) as? NSDictionary
            #expect(byHand != nil && byHand == byCodable, "\(record)")
        }
    }
}

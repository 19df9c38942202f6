import Foundation

/// One change the session writes to its store; read back in order at launch and folded into a
/// ``StoredSession``. JSON, so that a record is readable when a store must be inspected. Never
/// a secret: tokens and passwords are not among the fields.
enum StoreRecord: Codable, Equatable {
    /// A publish the app made: from now on it is kept until it ends.
    case publish(StoredPublishRecord)
    /// The publish went on the wire: it may have been applied.
    case publishSent(key: String)
    /// The publish ended with `outcome`.
    case publishEnded(key: String, outcome: StoredOutcome)
    /// The app dismissed a publish of an earlier launch that had ended: it is forgotten.
    case publishDismissed(key: String)
    /// Where the channel's stream stands (`nil`: held, with no position yet).
    case position(channel: String, position: StreamPosition?)
    /// Where the app has finished the channel's messages: a relaunch resumes from here.
    case finished(channel: String, position: StreamPosition, at: Int64)
    /// The app let the channel go.
    case channelDropped(channel: String)
    /// What the protocol keeps for the session, as it was when its socket ended.
    case wireState(WireSessionState?)
}

/// A publish as the store keeps it.
struct StoredPublishRecord: Codable, Equatable {
    /// The idempotency key: the publish's identity, across launches.
    var key: String
    var channel: String
    /// The data as JSON text.
    var json: String
    /// When the app made it (wall clock, Unix milliseconds).
    var createdAt: Int64
}

/// How a publish ended, as the store keeps it.
enum StoredOutcome: Codable, Equatable {
    /// Acknowledged (or sent where the protocol has no acknowledgement), with where it stands.
    case acknowledged(position: StreamPosition?, unconfirmed: Bool)
    /// Failed: the error's code and message.
    case failed(code: String, message: String)
}

/// What the store holds for a session, folded from its records: what a relaunch starts from,
/// and what a compaction writes back as a few records.
struct StoredSession: Equatable {
    /// A publish kept, with how far it got.
    struct Publish: Equatable {
        var record: StoredPublishRecord
        var wasSent = false
        var outcome: StoredOutcome?
    }

    /// The publishes kept, in the order they were made.
    private(set) var publishes: [Publish] = []
    private var publishIndex: [String: Int] = [:]
    /// Every channel held, with the position of the last message handed over.
    private(set) var positions: [String: StreamPosition?] = [:]
    /// Where the app has finished each channel's messages.
    private(set) var finished: [String: StreamPosition] = [:]
    /// When each of those was stored (wall clock, Unix milliseconds).
    private(set) var finishedAt: [String: Int64] = [:]
    private(set) var wireState: WireSessionState?

    init() {}

    /// Folds `records` in order.
    init(_ records: [StoreRecord]) {
        for record in records { apply(record) }
    }

    mutating func apply(_ record: StoreRecord) {
        switch record {
        case .publish(let publish):
            guard publishIndex[publish.key] == nil else { return }
            publishIndex[publish.key] = publishes.count
            publishes.append(Publish(record: publish))
        case .publishSent(let key):
            guard let index = publishIndex[key] else { return }
            if !publishes[index].wasSent { sentCount += 1 }
            publishes[index].wasSent = true
        case .publishEnded(let key, let outcome):
            guard let index = publishIndex[key] else { return }
            if publishes[index].outcome == nil { endedCount += 1 }
            publishes[index].outcome = outcome
        case .publishDismissed(let key):
            guard let index = publishIndex.removeValue(forKey: key) else { return }
            let dismissed = publishes.remove(at: index)
            if dismissed.wasSent { sentCount -= 1 }
            if dismissed.outcome != nil { endedCount -= 1 }
            for position in index..<publishes.count { publishIndex[publishes[position].record.key] = position }
        case .position(let channel, let position):
            positions[channel] = .some(position)
        case .finished(let channel, let position, let at):
            finished[channel] = position
            finishedAt[channel] = at
        case .channelDropped(let channel):
            positions[channel] = nil
            finished[channel] = nil
            finishedAt[channel] = nil
        case .wireState(let state):
            wireState = state
        }
    }

    /// How many records ``records`` holds, counted without building them (asked before every
    /// write: building them is linear in the outbox, and a burst of writes made it quadratic).
    var recordCount: Int { publishes.count + sentCount + endedCount + positions.count + finished.count + (wireState == nil ? 0 : 1) }
    /// How many of the publishes were sent, and how many ended (kept as they change).
    private var sentCount = 0
    private var endedCount = 0

    /// The few records that rebuild this state (for a compaction).
    var records: [StoreRecord] {
        var records: [StoreRecord] = []
        for publish in publishes {
            records.append(.publish(publish.record))
            if publish.wasSent { records.append(.publishSent(key: publish.record.key)) }
            if let outcome = publish.outcome { records.append(.publishEnded(key: publish.record.key, outcome: outcome)) }
        }
        for (channel, position) in positions.sorted(by: { $0.key < $1.key }) {
            records.append(.position(channel: channel, position: position))
            if let finished = finished[channel] { records.append(.finished(channel: channel, position: finished, at: finishedAt[channel] ?? 0)) }
        }
        if let wireState { records.append(.wireState(wireState)) }
        return records
    }
}

extension StoreRecord {
    /// The record's bytes in the store. The records a burst of publishes writes are written by
    /// hand, in the layout `Codable` gives them (`StoreRecordTests` checks that they read back the
    /// same): the generic encoder was a tenth of what a publish costs with a store.
    func encoded() -> Data {
        switch self {
        case .publish(let publish):
            var text = #"{"publish":{"_0":{"key":"#
            JSONWriter.writeString(publish.key, into: &text)
            text += #","channel":"#
            JSONWriter.writeString(publish.channel, into: &text)
            text += #","json":"#
            JSONWriter.writeString(publish.json, into: &text)
            text += #","createdAt":\#(publish.createdAt)}}}"#
            return Data(text.utf8)
        case .publishSent(let key):
            var text = #"{"publishSent":{"key":"#
            JSONWriter.writeString(key, into: &text)
            text += "}}"
            return Data(text.utf8)
        default:
            return encodedByCodable()
        }
    }

    /// The record's bytes as `Codable` lays them out.
    func encodedByCodable() -> Data {
        do {
            return try JSONEncoder().encode(self)
        } catch {
            preconditionFailure("a store record does not encode: \(error)")
        }
    }

    /// Reads a record back; `nil` for one this release cannot read (written by a newer one).
    static func decoded(_ data: Data) -> StoreRecord? {
        try? JSONDecoder().decode(StoreRecord.self, from: data)
    }
}

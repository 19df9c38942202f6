extension TetherResumeSet {
    /// A resumed set's answer, carried by the `resume_set` frame itself (`docs/PROTOCOL.md`,
    /// version 3): for each wanted member, in the set's order, where its channel stands now (its
    /// latest sequence number) as a distance from the position the client sent (from 0 when it
    /// sent none), and which members have a gap. Then come only the messages each member missed:
    /// no `ok` per subscription, so a set with nothing missed is answered by one frame.
    package struct Answers: Hashable, Sendable {
        /// One code per wanted member: the distance of its latest sequence number from its
        /// reference, zigzag (at or above it even, below it odd).
        package private(set) var codes: [UInt64] = []
        /// The indexes (in the set's order, among the wanted members) of the members whose
        /// missed messages the server no longer has, ascending.
        package private(set) var gaps: [Int] = []

        package init() {}

        package init(codes: [UInt64], gaps: [Int]) {
            self.codes = codes
            self.gaps = gaps
        }

        package mutating func reserveCapacity(_ count: Int) {
            codes.reserveCapacity(count)
        }

        /// Adds the next member's answer: its channel's `latest` sequence number, from
        /// `reference` (the `since` the client sent, or 0), and whether it has a gap.
        package mutating func append(latest: UInt64, from reference: UInt64, gap: Bool) {
            if gap { gaps.append(codes.count) }
            codes.append(latest >= reference ? (latest - reference) << 1 : ((reference - latest) << 1) - 1)
        }

        /// The latest sequence number of the member answered by `code`, from `reference`; nil
        /// when it is not a sequence number (a hostile or broken server).
        package static func latest(_ code: UInt64, from reference: UInt64) -> UInt64? {
            let distance = code & 1 == 0 ? code >> 1 : (code >> 1) + 1
            if code & 1 == 0 {
                let (latest, overflow) = reference.addingReportingOverflow(distance)
                return overflow ? nil : latest
            }
            return reference >= distance ? reference - distance : nil
        }

        /// The codes as ``TetherResumeSet/appendVarint(_:to:)`` writes them.
        package var latestText: String { Self.varintText(codes) }
        /// The gaps' indexes, likewise.
        package var gapsText: String { Self.varintText(gaps.map { UInt64($0) }) }

        /// Reads the two texts; nil when either is not a whole number of varints, or a gap's
        /// index is not a member's or not in ascending order.
        package init?(latest: Substring, gaps: Substring) {
            guard let codes = TetherResumeSet.varints(in: latest), let indexes = TetherResumeSet.varints(in: gaps) else { return nil }
            var previous: UInt64?
            for index in indexes {
                guard index < UInt64(codes.count), previous.map({ $0 < index }) ?? true else { return nil }
                previous = index
            }
            self.init(codes: codes, gaps: indexes.map { Int($0) })
        }

        private static func varintText(_ values: [UInt64]) -> String {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(values.count * 2)
            for value in values { TetherResumeSet.appendVarint(value, to: &bytes) }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}

extension TetherResumeSet.Answers {
    /// The answers of a resumed `resume_set` frame's `fields` (`latest`, and `gaps` if any).
    init(fields: [String: JSONValue]) throws(CodecError) {
        guard let latest = fields["latest"]?.stringValue else { throw CodecError(.missingField, "a resumed resume_set without 'latest'") }
        guard let answers = Self(latest: Substring(latest), gaps: Substring(fields["gaps"]?.stringValue ?? "")) else {
            throw CodecError(.malformed, "a resumed resume_set whose 'latest' or 'gaps' are not base-64url varints (gaps: ascending member indexes)")
        }
        self = answers
    }

    /// Writes the answers into a `resume_set` frame's members (`gaps` only when there are some).
    func write(into object: inout [String: JSONValue]) {
        object["latest"] = .string(latestText)
        if !gaps.isEmpty { object["gaps"] = .string(gapsText) }
    }
}

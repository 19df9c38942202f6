/// Where a channel's stream stands, in its protocol's own terms: a sequence number (Tether, and
/// MQTT's count of a subscription's deliveries), a point in time (Supabase's replay), or a token
/// only the server understands. The session keeps one per channel and resubscribes from it.
///
/// To the app it is an opaque cursor: keep it (it is `Codable`, and its encoding is stable
/// across releases: `{"kind": …, "ordinal": …}` or `{"kind": …, "token": …}`), compare two for
/// equality, show it. Only ``sequence`` reads a number out of it, where the protocol numbers
/// messages. Two positions of one stream are ordered when their protocol says they are (the
/// same `kind`, both numbers); the session never reads more than that.
public struct StreamPosition: Hashable, Sendable, Codable, CustomStringConvertible {
    /// What the position counts, named by its protocol: `sequence`, `timestamp-ms`, `opaque`, or
    /// a protocol's own.
    public let kind: String
    /// The position as its protocol wrote it.
    package let value: Value

    /// A position's value: a number that grows along the stream, or a token the server reads.
    package enum Value: Hashable, Sendable {
        case ordinal(UInt64)
        case token(String)
    }

    /// A position its protocol numbers: positions of one `kind` compare by `ordinal`.
    package init(kind: String, ordinal: UInt64) {
        self.kind = kind
        self.value = .ordinal(ordinal)
    }

    /// A position only its protocol understands: it does not compare.
    package init(kind: String, token: String) {
        self.kind = kind
        self.value = .token(token)
    }

    /// A per-channel sequence number (Tether; MQTT's count of a subscription's deliveries).
    package static func sequence(_ number: UInt64) -> StreamPosition { StreamPosition(kind: "sequence", ordinal: number) }

    /// A point in time, Unix milliseconds (Supabase's replay asks from one; earlier than 1970
    /// is 1970).
    package static func timestamp(milliseconds: Int64) -> StreamPosition {
        StreamPosition(kind: "timestamp-ms", ordinal: UInt64(max(0, milliseconds)))
    }

    /// A token only the server understands (an app cursor, an opaque offset).
    package static func opaque(_ token: String) -> StreamPosition { StreamPosition(kind: "opaque", token: token) }

    /// The sequence number, for a position that is one.
    public var sequence: UInt64? { kind == "sequence" ? ordinal : nil }

    /// The Unix milliseconds, for a position that is a point in time.
    package var milliseconds: Int64? { kind == "timestamp-ms" ? ordinal.map { Int64(clamping: $0) } : nil }

    /// The token, for an opaque position.
    package var token: String? {
        if case .token(let token) = value { token } else { nil }
    }

    private var ordinal: UInt64? {
        if case .ordinal(let ordinal) = value { ordinal } else { nil }
    }

    /// Indicates whether this position is at or past `other` in one stream: known for two
    /// numbered positions of one kind; `nil` where they do not compare (tokens, two kinds). The
    /// core compares positions only through this (where a catch-up ends); it never reads them.
    package func isAtOrPast(_ other: StreamPosition) -> Bool? {
        guard kind == other.kind, let this = ordinal, let that = other.ordinal else { return nil }
        return this >= that
    }

    public var description: String {
        switch value {
        case .ordinal(let ordinal): "\(kind) \(ordinal)"
        case .token(let token): "\(kind) \(token)"
        }
    }

    // MARK: Codable

    private enum CodingKeys: String, CodingKey {
        case kind, ordinal, token
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(String.self, forKey: .kind)
        let ordinal = try container.decodeIfPresent(UInt64.self, forKey: .ordinal)
        let token = try container.decodeIfPresent(String.self, forKey: .token)
        guard !kind.isEmpty else {
            throw DecodingError.dataCorruptedError(forKey: .kind, in: container, debugDescription: "a stream position names its kind")
        }
        switch (ordinal, token) {
        case (let ordinal?, nil): self.init(kind: kind, ordinal: ordinal)
        case (nil, let token?): self.init(kind: kind, token: token)
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .ordinal, in: container, debugDescription: "a stream position holds exactly one of an ordinal and a token"
            )
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        switch value {
        case .ordinal(let ordinal): try container.encode(ordinal, forKey: .ordinal)
        case .token(let token): try container.encode(token, forKey: .token)
        }
    }
}

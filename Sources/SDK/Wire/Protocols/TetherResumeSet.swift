/// Version 3 of Tether's protocol (`docs/PROTOCOL.md`, "Version 3: a resume set kept by the
/// server"): version 2, and the server keeps each connection's subscriptions under a token it
/// gives the client, so the next upgrade names them by that token and carries only their
/// positions — a few bytes a subscription, where version 2's `Tether-Resume` list carries every
/// channel's name and stops fitting a header at a few hundred.
package enum TetherResumeSet {
    package static let subprotocol = "tether.v3"
    package static let header = "Tether-Resume-Set"
    /// The longest `Tether-Resume-Set` value a client sends (bytes): with `Tether-Resume` (at
    /// most 4 KiB) and `Authorization`, the request head stays under 16 KiB (Node's limit) and
    /// each header line under nginx's 8 KiB.
    package static let maxHeaderBytes = 6144

    /// One subscription of a kept set: its channel and its base — the channel's latest sequence
    /// number when the server answered its subscribe on that connection (the `ok`'s `seq`),
    /// which both sides know, so a position travels as its distance from it.
    package struct Member: Hashable, Sendable, Codable {
        package var channel: String
        package var base: UInt64

        package init(channel: String, base: UInt64) {
            self.channel = channel
            self.base = base
        }
    }

    /// What the client asks of one member of the set.
    package enum Position: Hashable, Sendable {
        /// Not wanted now: the server does not subscribe it.
        case left
        /// Subscribe live (no `since`).
        case live
        /// Subscribe with this `since`.
        case since(UInt64)
    }

    /// A `Tether-Resume-Set` value: the token of the connection whose subscriptions the server
    /// kept, their number and digest as the client knows them (a set the server holds otherwise
    /// is not resumed), and a position for each member, in canonical order.
    package struct Request: Hashable, Sendable {
        package var token: String
        package var count: Int
        package var digest: UInt64
        /// One code per member (`0` left, `1` live, `2 + zigzag(since − base)`).
        package var codes: [UInt64]

        /// The request for `members` (canonical order) with `positions` (one each); nil when a
        /// position is too far from its base to be written (over 2⁶² away).
        package init?(token: String, members: [Member], positions: [Position]) {
            self.init(token: token, members: members, digest: TetherResumeSet.digest(members), positions: positions)
        }

        /// The same, with `members`' digest taken beforehand (``TetherSessionState/digest``).
        init?(token: String, members: [Member], digest: UInt64, positions: [Position]) {
            guard members.count == positions.count else { return nil }
            var codes: [UInt64] = []
            codes.reserveCapacity(members.count)
            for (member, position) in zip(members, positions) {
                guard let code = TetherResumeSet.code(position, base: member.base) else { return nil }
                codes.append(code)
            }
            self.token = token
            self.count = members.count
            self.digest = digest
            self.codes = codes
        }

        init(token: String, count: Int, digest: UInt64, codes: [UInt64]) {
            self.token = token
            self.count = count
            self.digest = digest
            self.codes = codes
        }

        /// How many members the client wants subscribed (wire ids 1 … this answer them).
        package var wantedCount: Int { codes.count { $0 != 0 } }

        /// The positions for `members`, when they are the set this request names (same number,
        /// same digest) and every code resolves against its base; nil otherwise.
        package func positions(for members: [Member]) -> [Position]? {
            guard members.count == count, codes.count == count, TetherResumeSet.digest(members) == digest else { return nil }
            var positions: [Position] = []
            positions.reserveCapacity(count)
            for (member, code) in zip(members, codes) {
                guard let position = TetherResumeSet.position(code, base: member.base) else { return nil }
                positions.append(position)
            }
            return positions
        }

        /// `token;count;digest;codes`: the digest as 16 hex digits, the codes as base-64url
        /// varints (five bits a character, the sixth saying another follows).
        package var headerValue: String {
            var text = "\(token);\(count);"
            let hex = String(digest, radix: 16)
            text += String(repeating: "0", count: 16 - hex.utf8.count) + hex + ";"
            var bytes: [UInt8] = []
            bytes.reserveCapacity(codes.count * 2)
            for code in codes { TetherResumeSet.appendVarint(code, to: &bytes) }
            return text + String(decoding: bytes, as: UTF8.self)
        }

        /// Reads a `Tether-Resume-Set` value; throws for a malformed one.
        package init(headerValue value: String) throws(TetherUpgrade.MalformedHeader) {
            let fields = TetherUpgrade.trimmingBlanks(Substring(value)).split(separator: ";", omittingEmptySubsequences: false)
            guard fields.count == 4, let count = Int(fields[1]), count >= 0, fields[2].utf8.count == 16, let digest = UInt64(fields[2], radix: 16) else {
                throw TetherUpgrade.MalformedHeader(description: "not token;count;digest;positions")
            }
            guard TetherResumeSet.isToken(fields[0]) else { throw TetherUpgrade.MalformedHeader(description: "the token is not 1 to 64 base-64url characters") }
            guard let codes = TetherResumeSet.varints(in: fields[3]), codes.count == count else {
                throw TetherUpgrade.MalformedHeader(description: "the positions are not \(count) base-64url varints")
            }
            self.init(token: String(fields[0]), count: count, digest: digest, codes: codes)
        }
    }

    /// `members` in canonical order: by the bytes of their channel's UTF-8.
    package static func canonical(_ members: [Member]) -> [Member] {
        // Each channel's bytes taken once, compared as bytes: `UTF8View`'s generic
        // `lexicographicallyPrecedes` was most of a reconnect's sort.
        let keyed = members.map { (key: Array($0.channel.utf8), member: $0) }
        return keyed.sorted { precedes($0.key, $1.key) }.map(\.member)
    }

    /// Byte order: the first differing byte decides; a prefix comes first.
    private static func precedes(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        left.withUnsafeBufferPointer { left in
            right.withUnsafeBufferPointer { right in
                for index in 0..<min(left.count, right.count) where left[index] != right[index] { return left[index] < right[index] }
                return left.count < right.count
            }
        }
    }

    /// FNV-1a (64 bits) over each member's channel, a zero byte, its base in decimal, a zero byte.
    package static func digest(_ members: [Member]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func add(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0100_0000_01b3
        }
        // The base's decimal digits, most significant first, without a `String` a member.
        for member in members {
            for byte in member.channel.utf8 { add(byte) }
            add(0)
            var divisor: UInt64 = 1
            while member.base / divisor >= 10 { divisor *= 10 }
            var rest = member.base
            while divisor > 0 {
                add(UInt8(ascii: "0") + UInt8(rest / divisor))
                rest %= divisor
                divisor /= 10
            }
            add(0)
        }
        return hash
    }

    /// A token a server issues: 1 to 64 characters of base-64url.
    package static func isToken(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.count <= 64 && text.utf8.allSatisfy { digitValue($0) != nil }
    }

    static func code(_ position: Position, base: UInt64) -> UInt64? {
        switch position {
        case .left: return 0
        case .live: return 1
        case .since(let since):
            let distance = since >= base ? since - base : base - since
            guard distance < 1 << 62 else { return nil }
            // zigzag: at or above the base even, below it odd.
            return 2 + (since >= base ? distance << 1 : (distance << 1) - 1)
        }
    }

    static func position(_ code: UInt64, base: UInt64) -> Position? {
        switch code {
        case 0: return .left
        case 1: return .live
        default:
            let zigzag = code - 2
            let distance = zigzag & 1 == 0 ? zigzag >> 1 : (zigzag >> 1) + 1
            if zigzag & 1 == 0 {
                let (since, overflow) = base.addingReportingOverflow(distance)
                return overflow ? nil : .since(since)
            }
            return base >= distance ? .since(base - distance) : nil
        }
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func digitValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }

    /// `value` as base-64url digits of five bits, most significant first; every digit but the
    /// last has its sixth bit set.
    package static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        // The most significant group's shift (a multiple of five), then each group down to it.
        var shift: UInt64 = 0
        while shift < 60, value >> (shift + 5) > 0 { shift += 5 }
        while shift > 0 {
            bytes.append(alphabet[Int((value >> shift) & 31 | 32)])
            shift -= 5
        }
        bytes.append(alphabet[Int(value & 31)])
    }

    /// The varints of ``appendVarint(_:to:)`` in `text`; nil when it is not a whole number of
    /// them or one is over 64 bits.
    package static func varints(in text: Substring) -> [UInt64]? {
        var values: [UInt64] = []
        var value: UInt64 = 0
        var digits = 0
        for byte in text.utf8 {
            guard let digit = digitValue(byte), value >> 59 == 0 else { return nil }
            value = value << 5 | UInt64(digit & 31)
            digits += 1
            if digit & 32 == 0 {
                values.append(value)
                value = 0
                digits = 0
            }
        }
        return digits == 0 ? values : nil
    }
}

package import Foundation

/// Tether's state for the session (``WireSessionState``): the token of the last version-3
/// connection and the subscriptions it had, as the server keeps them. In the process only: a
/// relaunch resumes by name (the server forgets a token after minutes anyway).
package struct TetherSessionState: WireSessionStateValue, Hashable {
    package static let kind = "tether-resume-set/1"
    package let token: String
    /// Canonical order.
    package let members: [TetherResumeSet.Member]
    /// ``TetherResumeSet/digest(_:)`` of `members`, taken once when the state is made (as the
    /// socket is let go), not at the next upgrade, where the recovery waits for it.
    package let digest: UInt64

    package init(token: String, members: [TetherResumeSet.Member]) {
        self.token = token
        self.members = members
        self.digest = TetherResumeSet.digest(members)
    }

    private enum CodingKeys: String, CodingKey { case token, members }

    /// The members as one string, `base;channel` entries separated by `,` with the channel
    /// percent-encoded (``TetherUpgrade/percentEncode(_:into:)``): a thousand members through
    /// `JSONEncoder` one by one cost milliseconds at every reconnect.
    private var membersText: String {
        var text = ""
        for (index, member) in members.enumerated() {
            if index > 0 { text += "," }
            text += "\(member.base);"
            TetherUpgrade.percentEncode(member.channel, into: &text)
        }
        return text
    }

    /// The members from ``membersText``; nil when an entry is not `base;channel`. One pass over
    /// the bytes: split into substrings and parsed field by field, a thousand members took a
    /// millisecond at every reconnect.
    private static func members(from text: String) -> [TetherResumeSet.Member]? {
        var members: [TetherResumeSet.Member] = []
        var base: UInt64 = 0
        var baseDigits = 0
        var channel: [UInt8] = []
        var inChannel = false
        func member() -> TetherResumeSet.Member? {
            guard inChannel, !channel.isEmpty, let name = TetherUpgrade.percentDecode(channel) else { return nil }
            return TetherResumeSet.Member(channel: name, base: base)
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: ","):
                guard let member = member() else { return nil }
                members.append(member)
                (base, baseDigits, inChannel) = (0, 0, false)
                channel.removeAll(keepingCapacity: true)
            case UInt8(ascii: ";") where !inChannel:
                guard baseDigits > 0 else { return nil }
                inChannel = true
            case UInt8(ascii: "0")...UInt8(ascii: "9") where !inChannel:
                let (times10, overflow) = base.multipliedReportingOverflow(by: 10)
                let (sum, carry) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
                guard !overflow, !carry else { return nil }
                (base, baseDigits) = (sum, baseDigits + 1)
            default:
                guard inChannel else { return nil }
                channel.append(byte)
            }
        }
        if baseDigits > 0 || inChannel {
            guard let member = member() else { return nil }
            members.append(member)
        }
        return members
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(token, forKey: .token)
        try container.encode(membersText, forKey: .members)
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        token = try container.decode(String.self, forKey: .token)
        guard let members = Self.members(from: try container.decode(String.self, forKey: .members)) else {
            throw DecodingError.dataCorruptedError(forKey: .members, in: container, debugDescription: "a member is not base;channel")
        }
        self.members = members
        self.digest = TetherResumeSet.digest(members)
    }

    /// The same JSON as `JSONEncoder`'s (`{"token", "members"}`), written directly: read and
    /// written at every reconnect, Foundation's coders cost milliseconds there.
    package func encodedData() throws -> Data {
        Data(JSONWriter.text(["token": .string(token), "members": .string(membersText)]).utf8)
    }

    package static func decoded(from data: Data) throws -> Self {
        guard case .object(let object)? = try? JSONParser.parse(Array(data)), case .string(let token)? = object["token"],
            case .string(let text)? = object["members"], let members = members(from: text)
        else { throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not a \(kind) state")) }
        return Self(token: token, members: members)
    }
}

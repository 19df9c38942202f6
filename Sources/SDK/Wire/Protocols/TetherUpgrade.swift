import Foundation

/// Version 2 of Tether's protocol (`docs/PROTOCOL.md`, "Version 2: resume in the upgrade"):
/// the client offers the WebSocket subprotocol `tether.v2`, puts its credentials in the
/// `Authorization` header (never the URL) and its subscriptions, each with its `since`, in the
/// `Tether-Resume` header. A server that speaks version 2 checks the credentials before it
/// answers (401 refuses them), chooses `tether.v2`, and sends each subscription's `ok` and
/// catch-up right after the 101, as if the client had sent `subscribe` with that `id`. A server
/// that does not chooses no subprotocol, and the client goes on with version 1's `auth`.
package enum TetherUpgrade {
    package static let subprotocol = "tether.v2"
    package static let resumeHeader = "Tether-Resume"
    package static let authorizationHeader = "Authorization"
    /// The longest `Tether-Resume` value a client sends (bytes). Servers and proxies commonly
    /// refuse a header line over 8 KiB (nginx's default) and a whole request head over 8–16 KiB;
    /// half of the smallest leaves room for the rest. A longer list goes in frames after the 101.
    package static let maxResumeHeaderBytes = 4096

    /// One subscription carried by the upgrade request: answered as a `subscribe` with `id`.
    package struct Entry: Hashable, Sendable {
        package var id: RequestID
        package var channel: String
        package var since: UInt64?

        package init(id: RequestID, channel: String, since: UInt64?) {
            self.id = id
            self.channel = channel
            self.since = since
        }
    }

    /// Why a `Tether-Resume` value was refused.
    package struct MalformedHeader: Error, Hashable, Sendable, CustomStringConvertible {
        package var description: String

        package init(description: String) {
            self.description = description
        }
    }

    /// `id;channel[;since]` entries separated by `,`; the channel percent-encoded (every byte
    /// outside RFC 3986's unreserved characters), so any UTF-8 name fits a header.
    /// Byte by byte, without Foundation (a list of a hundred is written at every reconnect).
    package static func encode(_ entries: [Entry]) -> String {
        var text = ""
        for (offset, entry) in entries.enumerated() {
            if offset > 0 { text += "," }
            text += "\(entry.id);"
            percentEncode(entry.channel, into: &text)
            if let since = entry.since { text += ";\(since)" }
        }
        return text
    }

    /// The entries of a `Tether-Resume` value; refuses a malformed one (and duplicate ids or
    /// channels, an empty or over-long channel name).
    /// Byte by byte, without Foundation (a server reads one at every reconnect).
    package static func decode(_ value: String) throws(MalformedHeader) -> [Entry] {
        let trimmed = trimmingBlanks(Substring(value))
        guard !trimmed.isEmpty else { return [] }
        var entries: [Entry] = []
        var ids: Set<RequestID> = []
        var channels: Set<String> = []
        for item in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            let fields = trimmingBlanks(item).split(separator: ";", omittingEmptySubsequences: false)
            guard fields.count == 2 || fields.count == 3, let id = RequestID(fields[0]) else {
                throw MalformedHeader(description: "an entry is not id;channel[;since]: '\(item.prefix(80))'")
            }
            guard let channel = percentDecode(fields[1]), !channel.isEmpty, channel.utf8.count <= 256 else {
                throw MalformedHeader(description: "entry \(id): the channel is not 1 to 256 bytes of percent-encoded UTF-8")
            }
            var since: UInt64?
            if fields.count == 3 {
                guard let number = UInt64(fields[2]) else { throw MalformedHeader(description: "entry \(id): since is not a whole number") }
                since = number
            }
            guard ids.insert(id).inserted, channels.insert(channel).inserted else {
                throw MalformedHeader(description: "entry \(id): a repeated id or channel")
            }
            entries.append(Entry(id: id, channel: channel, since: since))
        }
        return entries
    }

    /// Every byte of `string`'s UTF-8 outside RFC 3986's unreserved characters as `%XX`.
    package static func percentEncode(_ string: String, into text: inout String) {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(string.utf8.count)
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                bytes.append(byte)
            default:
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        text += String(decoding: bytes, as: UTF8.self)
    }

    /// `%XX` sequences as bytes; `nil` for a `%` not followed by two hex digits, or bytes that
    /// are not UTF-8.
    package static func percentDecode(_ field: Substring) -> String? {
        percentDecode(field.utf8)
    }

    /// `%XX` sequences in `field`'s bytes as bytes; `nil` as for a string.
    package static func percentDecode(_ field: some Collection<UInt8>) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(field.count)
        var iterator = field.makeIterator()
        func hexValue(_ byte: UInt8?) -> UInt8? {
            switch byte {
            case let byte? where (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte): byte - UInt8(ascii: "0")
            case let byte? where (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte): byte - UInt8(ascii: "a") + 10
            case let byte? where (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = hexValue(iterator.next()), let low = hexValue(iterator.next()) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// `text` without the spaces and tabs around it.
    package static func trimmingBlanks(_ text: Substring) -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isBlank($0) }), let last = text.lastIndex(where: { !isBlank($0) }) else { return "" }
        return text[first...last]
    }

    /// `Bearer <token>`, or nil when the token cannot be a header value (a control character,
    /// a space or a non-ASCII byte): such a token goes in the `auth` frame instead.
    package static func authorization(_ token: Secret) -> String? {
        let bytes = token.revealedValue.utf8
        guard !bytes.isEmpty, bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else { return nil }
        return "Bearer " + token.revealedValue
    }

    /// The token of an `Authorization: Bearer` value.
    package static func bearerToken(_ authorization: String) -> String? {
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1]).trimmingCharacters(in: .whitespaces)
    }
}

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
    }

    /// `id;channel[;since]` entries separated by `,`; the channel percent-encoded (every byte
    /// outside RFC 3986's unreserved characters), so any UTF-8 name fits a header.
    package static func encode(_ entries: [Entry]) -> String {
        entries.map { entry in
            var text = "\(entry.id);" + (entry.channel.addingPercentEncoding(withAllowedCharacters: .urlUnreserved) ?? "")
            if let since = entry.since { text += ";\(since)" }
            return text
        }.joined(separator: ",")
    }

    /// The entries of a `Tether-Resume` value; refuses a malformed one (and duplicate ids or
    /// channels, an empty or over-long channel name).
    package static func decode(_ value: String) throws(MalformedHeader) -> [Entry] {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return [] }
        var entries: [Entry] = []
        var ids: Set<RequestID> = []
        var channels: Set<String> = []
        for item in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            let fields = item.trimmingCharacters(in: .whitespaces).split(separator: ";", omittingEmptySubsequences: false)
            guard fields.count == 2 || fields.count == 3, let id = RequestID(fields[0]) else {
                throw MalformedHeader(description: "an entry is not id;channel[;since]: '\(item.prefix(80))'")
            }
            guard let channel = String(fields[1]).removingPercentEncoding, !channel.isEmpty, channel.utf8.count <= 256 else {
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

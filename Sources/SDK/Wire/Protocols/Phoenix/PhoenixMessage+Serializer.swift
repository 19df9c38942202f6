import Foundation

extension PhoenixMessage {
    /// The binary frames' kinds (3 and 4 are Supabase Realtime's: a user broadcast pushed by a
    /// client, and one the server sends).
    private enum Kind: UInt8 {
        case push = 0, reply = 1, broadcast = 2, userBroadcastPush = 3, userBroadcast = 4
    }

    /// Who sent a frame: a binary push has a ref only from the client (phoenix.js `decodePush`:
    /// "pushes have no ref" from the server).
    package enum Sender: Sendable { case server, client }

    /// Decodes a frame the server sent (or, with `from: .client`, for the test peer, one a
    /// client sent).
    package static func decode(_ frame: TransportFrame, from sender: Sender = .server, maxDepth: Int = 64) throws(PhoenixFrameError) -> PhoenixMessage {
        switch frame {
        case .text(let text): try decode(text: text, maxDepth: maxDepth)
        case .binary(let bytes): try decode(binary: bytes, from: sender, maxDepth: maxDepth)
        }
    }

    private static func decode(text: String, maxDepth: Int) throws(PhoenixFrameError) -> PhoenixMessage {
        let value: JSONValue
        do {
            value = try JSONParser.parse(text, maxDepth: maxDepth)
        } catch {
            throw PhoenixFrameError("not JSON (\(error))")
        }
        guard let fields = value.arrayValue, fields.count == 5 else {
            throw PhoenixFrameError("not a V2 message (a JSON array of join_ref, ref, topic, event, payload)")
        }
        guard let topic = fields[2].stringValue, let event = fields[3].stringValue else {
            throw PhoenixFrameError("the topic and the event must be strings")
        }
        return PhoenixMessage(
            joinRef: try reference(fields[0], "join_ref"), ref: try reference(fields[1], "ref"), topic: topic, event: event, payload: .json(fields[4])
        )
    }

    /// A ref: a string, `null`, or a number (a server echoes a numeric ref as a number).
    private static func reference(_ value: JSONValue, _ name: String) throws(PhoenixFrameError) -> String? {
        switch value {
        case .null: return nil
        case .string(let text): return text
        case .number(let number): return number.description
        default: throw PhoenixFrameError("the \(name) must be a string, a number or null")
        }
    }

    private static func decode(binary bytes: [UInt8], from sender: Sender, maxDepth: Int) throws(PhoenixFrameError) -> PhoenixMessage {
        guard let first = bytes.first, let kind = Kind(rawValue: first), kind != .userBroadcastPush || sender == .client else {
            throw PhoenixFrameError("a binary frame of unknown kind \(bytes.first.map(String.init) ?? "none")")
        }
        var reader = ByteReader(bytes: bytes, offset: 1)
        switch kind {
        case .push where sender == .server:
            let lengths = try reader.lengths(3)
            let joinRef = try reader.text(lengths[0]), topic = try reader.text(lengths[1]), event = try reader.text(lengths[2])
            return PhoenixMessage(joinRef: joinRef.nilIfEmpty, ref: nil, topic: topic, event: event, payload: .binary(reader.rest))
        case .userBroadcast:
            return try userBroadcast(&reader, maxDepth: maxDepth)
        case .userBroadcastPush:
            throw PhoenixFrameError("a Supabase user broadcast push is not decoded")
        case .push:
            let lengths = try reader.lengths(4)
            let joinRef = try reader.text(lengths[0]), ref = try reader.text(lengths[1])
            let topic = try reader.text(lengths[2]), event = try reader.text(lengths[3])
            return PhoenixMessage(joinRef: joinRef.nilIfEmpty, ref: ref.nilIfEmpty, topic: topic, event: event, payload: .binary(reader.rest))
        case .reply:
            let lengths = try reader.lengths(4)
            let joinRef = try reader.text(lengths[0]), ref = try reader.text(lengths[1])
            let topic = try reader.text(lengths[2]), status = try reader.text(lengths[3])
            return PhoenixMessage(
                joinRef: joinRef.nilIfEmpty, ref: ref.nilIfEmpty, topic: topic, event: Event.reply, payload: .binaryReply(status: status, response: reader.rest)
            )
        case .broadcast:
            let lengths = try reader.lengths(2)
            let topic = try reader.text(lengths[0]), event = try reader.text(lengths[1])
            return PhoenixMessage(joinRef: nil, ref: nil, topic: topic, event: event, payload: .binary(reader.rest))
        }
    }

    /// Supabase's user broadcast (kind 4: topic, event, metadata JSON, the payload's encoding,
    /// the payload), as the JSON broadcast carries it: `{"type", "event", "payload", "meta"?}` (a
    /// binary payload as `{"binary": base64}`).
    private static func userBroadcast(_ reader: inout ByteReader, maxDepth: Int) throws(PhoenixFrameError) -> PhoenixMessage {
        let lengths = try reader.lengths(4)
        let isJSON = lengths[3] == 1
        let topic = try reader.text(lengths[0]), event = try reader.text(lengths[1]), metadata = try reader.text(lengths[2])
        let rest = reader.rest
        var broadcast: [String: JSONValue] = ["type": "broadcast", "event": .string(event)]
        do {
            if !metadata.isEmpty { broadcast["meta"] = try JSONParser.parse(metadata, maxDepth: maxDepth) }
            if isJSON {
                guard let text = String(validating: rest, as: UTF8.self) else { throw PhoenixFrameError("a user broadcast's JSON payload is not UTF-8") }
                broadcast["payload"] = try JSONParser.parse(text, maxDepth: maxDepth)
            } else {
                broadcast["payload"] = ["binary": .string(Data(rest).base64EncodedString())]
            }
        } catch let error as PhoenixFrameError {
            throw error
        } catch {
            throw PhoenixFrameError("a user broadcast's metadata or payload is not JSON (\(error))")
        }
        return PhoenixMessage(joinRef: nil, ref: nil, topic: topic, event: "broadcast", payload: .json(.object(broadcast)))
    }

    /// Encodes the message as the client sends it: JSON text, or a binary push. A binary
    /// payload on a field longer than a byte can count, or a reply or broadcast (the server's
    /// kinds), cannot be sent.
    package func encoded() throws(PhoenixFrameError) -> TransportFrame {
        switch payload {
        case .json(let value):
            let reference: (String?) -> JSONValue = { $0.map(JSONValue.string) ?? .null }
            return .text(JSONWriter.text(.array([reference(joinRef), reference(ref), .string(topic), .string(event), value])))
        case .binary(let data):
            let fields = [joinRef ?? "", ref ?? "", topic, event].map { Array($0.utf8) }
            guard let long = fields.firstIndex(where: { $0.count > 255 }) else {
                return .binary([Kind.push.rawValue] + fields.map { UInt8($0.count) } + fields.flatMap { $0 } + data)
            }
            throw PhoenixFrameError("the \(["join_ref", "ref", "topic", "event"][long]) of a binary push is longer than 255 bytes")
        case .binaryReply:
            throw PhoenixFrameError("a client does not send replies")
        }
    }
}

/// Reads a binary frame's one-byte lengths and the fields they measure.
private struct ByteReader {
    let bytes: [UInt8]
    var offset: Int

    mutating func lengths(_ count: Int) throws(PhoenixFrameError) -> [Int] {
        guard offset + count <= bytes.count else { throw PhoenixFrameError("a binary frame cut short in its header") }
        defer { offset += count }
        return bytes[offset..<offset + count].map(Int.init)
    }

    mutating func text(_ length: Int) throws(PhoenixFrameError) -> String {
        guard offset + length <= bytes.count else { throw PhoenixFrameError("a binary frame cut short in its fields") }
        defer { offset += length }
        guard let text = String(validating: bytes[offset..<offset + length], as: UTF8.self) else {
            throw PhoenixFrameError("a binary frame's field is not UTF-8")
        }
        return text
    }

    var rest: [UInt8] { Array(bytes[offset...]) }
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}

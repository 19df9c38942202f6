/// The default protocol: JSON objects in WebSocket text frames, one message a frame (see
/// `docs/PROTOCOL.md`). It encodes and decodes both directions, so servers and test peers can
/// use it too. It never traps on input.
public struct JSONWireCodec: WireCodec, Hashable {
    /// The largest frame accepted, in bytes of UTF-8.
    public var maxFrameBytes: Int
    /// The deepest nesting accepted in a frame.
    public var maxDepth: Int

    public init(maxFrameBytes: Int = 1 << 20, maxDepth: Int = 32) {
        self.maxFrameBytes = maxFrameBytes
        self.maxDepth = maxDepth
    }

    // MARK: Client side

    public func encode(_ message: ClientMessage) throws(CodecError) -> TransportFrame {
        var object: [String: JSONValue] = ["id": .number(Double(message.id))]
        switch message {
        case .authenticate(_, let token):
            object["type"] = "auth"
            if let token { object["token"] = .string(token.revealedValue) }
        case .subscribe(_, let channel, let since):
            object["type"] = "subscribe"
            object["channel"] = .string(channel)
            if let since { object["since"] = .number(Double(since)) }
        case .unsubscribe(_, let channel):
            object["type"] = "unsubscribe"
            object["channel"] = .string(channel)
        case .publish(_, let channel, let data):
            object["type"] = "publish"
            object["channel"] = .string(channel)
            object["data"] = data
        case .ping:
            object["type"] = "ping"
        }
        return try checkedFrame(JSONWriter.text(.object(object)))
    }

    public func decode(_ frame: TransportFrame) throws(CodecError) -> ServerMessage {
        let fields = try object(in: frame)
        let type = try string("type", in: fields)
        switch type {
        case "ok":
            return .ack(Ack(id: try requestID("id", in: fields), sequence: try optionalSequence("seq", in: fields), gap: fields["gap"]?.boolValue ?? false))
        case "message":
            guard let data = fields["data"] else { throw CodecError(.missingField, "message without data") }
            return .message(ChannelMessage(channel: try channel(in: fields), sequence: try sequence("seq", in: fields), data: data))
        case "error":
            let id: RequestID? = try optionalSequence("id", in: fields)
            return .error(ServerError(id: id, code: try string("code", in: fields), message: fields["message"]?.stringValue ?? ""))
        case "pong":
            return .pong(id: try requestID("id", in: fields))
        default:
            throw CodecError(.unknownType, "unknown server message type '\(type.prefix(40))'")
        }
    }

    // MARK: Server side

    /// The frame for a message a server sends.
    public func encode(_ message: ServerMessage) throws(CodecError) -> TransportFrame {
        var object: [String: JSONValue] = [:]
        switch message {
        case .ack(let ack):
            object["type"] = "ok"
            object["id"] = .number(Double(ack.id))
            if let sequence = ack.sequence { object["seq"] = .number(Double(sequence)) }
            if ack.gap { object["gap"] = true }
        case .message(let message):
            object["type"] = "message"
            object["channel"] = .string(message.channel)
            object["seq"] = .number(Double(message.sequence))
            object["data"] = message.data
        case .error(let error):
            object["type"] = "error"
            object["id"] = error.id.map { .number(Double($0)) } ?? .null
            object["code"] = .string(error.code)
            object["message"] = .string(error.message)
        case .pong(let id):
            object["type"] = "pong"
            object["id"] = .number(Double(id))
        }
        return try checkedFrame(JSONWriter.text(.object(object)))
    }

    /// The message in a frame a client sent.
    public func decodeClientMessage(_ frame: TransportFrame) throws(CodecError) -> ClientMessage {
        let fields = try object(in: frame)
        let type = try string("type", in: fields)
        let id = try requestID("id", in: fields)
        switch type {
        case "auth":
            guard let token = fields["token"], token != .null else { return .authenticate(id: id, token: nil) }
            guard let value = token.stringValue else { throw CodecError(.missingField, "token must be a string") }
            return .authenticate(id: id, token: Secret(value))
        case "subscribe":
            return .subscribe(id: id, channel: try channel(in: fields), since: try optionalSequence("since", in: fields))
        case "unsubscribe":
            return .unsubscribe(id: id, channel: try channel(in: fields))
        case "publish":
            guard let data = fields["data"] else { throw CodecError(.missingField, "publish without data") }
            return .publish(id: id, channel: try channel(in: fields), data: data)
        case "ping":
            return .ping(id: id)
        default:
            throw CodecError(.unknownType, "unknown client message type '\(type.prefix(40))'")
        }
    }

    // MARK: Helpers

    private func checkedFrame(_ text: String) throws(CodecError) -> TransportFrame {
        guard text.utf8.count <= maxFrameBytes else {
            throw CodecError(.oversize, "message of \(text.utf8.count) bytes exceeds the limit of \(maxFrameBytes)")
        }
        return .text(text)
    }

    private func object(in frame: TransportFrame) throws(CodecError) -> [String: JSONValue] {
        guard case .text(let text) = frame else { throw CodecError(.unsupportedFrame, "binary frames are not part of the protocol") }
        let count = text.utf8.count
        guard count <= maxFrameBytes else { throw CodecError(.oversize, "frame of \(count) bytes exceeds the limit of \(maxFrameBytes)") }
        let value: JSONValue
        do {
            value = try JSONParser.parse(text, maxDepth: maxDepth)
        } catch {
            throw CodecError(.malformed, error.description)
        }
        guard case .object(let fields) = value else { throw CodecError(.malformed, "a frame must hold a JSON object") }
        return fields
    }

    private func string(_ key: String, in fields: [String: JSONValue]) throws(CodecError) -> String {
        guard let value = fields[key]?.stringValue else { throw CodecError(.missingField, "'\(key)' must be a string") }
        return value
    }

    private func channel(in fields: [String: JSONValue]) throws(CodecError) -> String {
        let name = try string("channel", in: fields)
        guard !name.isEmpty, name.utf8.count <= 256 else { throw CodecError(.missingField, "'channel' must be 1 to 256 bytes") }
        return name
    }

    private func requestID(_ key: String, in fields: [String: JSONValue]) throws(CodecError) -> RequestID {
        guard let value = fields[key]?.integerValue, value >= 0 else { throw CodecError(.missingField, "'\(key)' must be a whole number ≥ 0") }
        return RequestID(value)
    }

    private func sequence(_ key: String, in fields: [String: JSONValue]) throws(CodecError) -> UInt64 {
        guard let value = fields[key]?.integerValue, value >= 0 else { throw CodecError(.missingField, "'\(key)' must be a whole number ≥ 0") }
        return UInt64(value)
    }

    private func optionalSequence(_ key: String, in fields: [String: JSONValue]) throws(CodecError) -> UInt64? {
        guard let value = fields[key], value != .null else { return nil }
        return try sequence(key, in: fields)
    }
}

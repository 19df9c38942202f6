/// The default protocol: JSON objects in WebSocket text frames, one message a frame (see
/// `docs/PROTOCOL.md`). It encodes and decodes both directions, so servers and test peers can
/// use it too. It never traps on input, and it never encodes a frame its own decoder would
/// refuse: every limit decoding enforces (size, depth, numbers, channel names) encoding
/// enforces too, as a typed ``CodecError``.
package struct JSONWireCodec: WireCodec, Hashable {
    /// The largest frame accepted, in bytes of UTF-8.
    package var maxFrameBytes: Int
    /// The deepest nesting accepted in a frame.
    package var maxDepth: Int

    package init(maxFrameBytes: Int = 1 << 20, maxDepth: Int = 32) {
        self.maxFrameBytes = maxFrameBytes
        self.maxDepth = maxDepth
    }

    // MARK: Client side

    package func encode(_ message: ClientMessage) throws(CodecError) -> TransportFrame {
        if let text = try Self.envelopeText(message) {
            guard text.utf8.count <= maxFrameBytes else {
                throw CodecError(.oversize, "message of \(text.utf8.count) bytes exceeds the limit of \(maxFrameBytes)")
            }
            return .text(text)
        }
        var object: [String: JSONValue] = ["id": JSONValue(message.id)]
        switch message {
        case .authenticate(_, let token):
            object["type"] = "auth"
            if let token { object["token"] = .string(token.revealedValue) }
        case .subscribe(_, let channel, let since):
            object["type"] = "subscribe"
            object["channel"] = try channelValue(channel)
            if let since { object["since"] = JSONValue(since) }
        case .unsubscribe(_, let channel):
            object["type"] = "unsubscribe"
            object["channel"] = try channelValue(channel)
        case .publish(_, let channel, let data, let key):
            object["type"] = "publish"
            object["channel"] = try channelValue(channel)
            object["data"] = data
            if let key {
                try Self.checkPublishKey(key)
                object["key"] = .string(key)
            }
        case .ping:
            object["type"] = "ping"
        }
        return try checkedFrame(.object(object))
    }

    package func decode(_ frame: TransportFrame) throws(CodecError) -> ServerMessage {
        // A `message` and an `ok` as servers write them are read directly (see
        // ``CanonicalMessage``, ``CanonicalAck``).
        if let text = directlyReadable(frame) {
            if let message = CanonicalMessage.parse(text, maxDepth: maxDepth) { return .message(message) }
            if let ack = CanonicalAck.parse(text) { return .ack(ack) }
        }
        return try decodeThroughParser(frame)
    }

    /// A `message` as servers write it, read directly: ``decode(_:)``'s answer, unwrapped.
    package func channelMessage(in frame: TransportFrame) -> ChannelMessage? { directlyReadable(frame).flatMap { CanonicalMessage.parse($0, maxDepth: maxDepth) } }

    /// ``decode(_:)`` without the direct reading of a canonical `message` or `ok` (the tests
    /// hold the two to the same answers).
    func decodeThroughParser(_ frame: TransportFrame) throws(CodecError) -> ServerMessage {
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
        case "resume_set":
            let token = try string("token", in: fields)
            guard TetherResumeSet.isToken(Substring(token)) else { throw CodecError(.missingField, "a resume token is 1 to 64 base-64url characters") }
            guard let resumed = fields["resumed"]?.boolValue else { throw CodecError(.missingField, "resume_set without 'resumed'") }
            // A resumed set is answered here, member by member: no `ok` follows for them.
            return .resumeSet(token: token, resumed: resumed, answers: resumed ? try TetherResumeSet.Answers(fields: fields) : nil)
        default:
            throw CodecError(.unknownType, "unknown server message type '\(type.prefix(40))'")
        }
    }

    // MARK: Server side

    /// The frame for a message a server sends.
    package func encode(_ message: ServerMessage) throws(CodecError) -> TransportFrame {
        // An acknowledgement or a pong, written directly (the same text, members in sorted
        // order): a server answers a replay's hundreds of requests at once.
        switch message {
        case .ack(let ack):
            var text = ack.gap ? #"{"gap":true,"id":\#(ack.id),"# : #"{"id":\#(ack.id),"#
            if let sequence = ack.sequence { text += #""seq":\#(sequence),"# }
            return .text(text + #""type":"ok"}"#)
        case .pong(let id):
            return .text(#"{"id":\#(id),"type":"pong"}"#)
        case .message, .error, .resumeSet:
            break
        }
        var object: [String: JSONValue] = [:]
        switch message {
        case .ack(let ack):
            object["type"] = "ok"
            object["id"] = JSONValue(ack.id)
            if let sequence = ack.sequence { object["seq"] = JSONValue(sequence) }
            if ack.gap { object["gap"] = true }
        case .message(let message):
            object["type"] = "message"
            object["channel"] = try channelValue(message.channel)
            guard let sequence = message.sequence else { throw CodecError(.missingField, "a Tether message carries its sequence number") }
            object["seq"] = JSONValue(sequence)
            object["data"] = message.data
        case .error(let error):
            object["type"] = "error"
            object["id"] = error.id.map { JSONValue($0) } ?? .null
            object["code"] = .string(error.code)
            object["message"] = .string(error.message)
        case .pong(let id):
            object["type"] = "pong"
            object["id"] = JSONValue(id)
        case .resumeSet(let token, let resumed, let answers):
            object["type"] = "resume_set"
            object["token"] = .string(token)
            object["resumed"] = .bool(resumed)
            answers?.write(into: &object)
        }
        return try checkedFrame(.object(object))
    }

    /// The message in a frame a client sent.
    package func decodeClientMessage(_ frame: TransportFrame) throws(CodecError) -> ClientMessage {
        // A `subscribe` as clients write it is read directly (see ``CanonicalSubscribe``).
        if let text = directlyReadable(frame), let subscribe = CanonicalSubscribe.parse(text) {
            try Self.checkChannel(subscribe.channel)
            return .subscribe(id: subscribe.id, channel: subscribe.channel, since: subscribe.since)
        }
        return try decodeClientMessageThroughParser(frame)
    }

    /// ``decodeClientMessage(_:)`` without the direct reading of a canonical `subscribe` (the
    /// tests hold the two to the same answers).
    func decodeClientMessageThroughParser(_ frame: TransportFrame) throws(CodecError) -> ClientMessage {
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
            var key: String?
            if let value = fields["key"], value != .null {
                guard let text = value.stringValue else { throw CodecError(.missingField, "'key' must be a string") }
                try Self.checkPublishKey(text)
                key = text
            }
            return .publish(id: id, channel: try channel(in: fields), data: data, key: key)
        case "ping":
            return .ping(id: id)
        default:
            throw CodecError(.unknownType, "unknown client message type '\(type.prefix(40))'")
        }
    }

    // MARK: Helpers

    /// The frame's text, when a reader of a canonical form may take it. The limits stay the
    /// parser's: a frame over the size limit, or a depth limit below a flat object's (its members
    /// are the second level), goes to the parser, which refuses it.
    private func directlyReadable(_ frame: TransportFrame) -> String? {
        guard case .text(let text) = frame, maxDepth >= 2, text.utf8.count <= maxFrameBytes else { return nil }
        return text
    }

    /// The id of a request in a frame the codec refused (too deep, an unknown type, a bad
    /// field), when the frame is a JSON object whose top-level `id` is readable: so a server
    /// can tell the client which request failed. It never builds the rest of the frame, so a
    /// frame of any depth costs no more than reading it once.
    package func requestID(inRefused frame: TransportFrame) -> RequestID? {
        guard case .text(let text) = frame, text.utf8.count <= maxFrameBytes else { return nil }
        return JSONParser.topLevelMember("id", in: text)?.unsignedIntegerValue
    }

    /// The text of a message that is an envelope only (no app data), written directly — the
    /// same text as through a ``JSONValue``, members in sorted order: a replay writes hundreds
    /// of subscribes at once. `nil` for a message that carries app data (a publish).
    static func envelopeText(_ message: ClientMessage) throws(CodecError) -> String? {
        var text = "{"
        switch message {
        case .authenticate(let id, let token):
            text += #""id":\#(id),"#
            if let token {
                text += #""token":"#
                JSONWriter.writeString(token.revealedValue, into: &text)
                text += ","
            }
            text += #""type":"auth"}"#
        case .subscribe(let id, let channel, let since):
            try checkChannel(channel)
            text += #""channel":"#
            JSONWriter.writeString(channel, into: &text)
            text += #","id":\#(id),"#
            if let since { text += #""since":\#(since),"# }
            text += #""type":"subscribe"}"#
        case .unsubscribe(let id, let channel):
            try checkChannel(channel)
            text += #""channel":"#
            JSONWriter.writeString(channel, into: &text)
            text += #","id":\#(id),"type":"unsubscribe"}"#
        case .ping(let id):
            text += #""id":\#(id),"type":"ping"}"#
        case .publish:
            return nil
        }
        return text
    }

    private func checkedFrame(_ value: JSONValue) throws(CodecError) -> TransportFrame {
        let text: String
        do {
            text = try JSONWriter.checkedText(value, maxDepth: maxDepth)
        } catch {
            switch error {
            case .tooDeep(let limit): throw CodecError(.tooDeep, "the message nests deeper than \(limit) levels")
            case .nonFiniteNumber(let number): throw CodecError(.invalidNumber, "JSON cannot carry the number \(number)")
            }
        }
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
            throw CodecError(error.isDepthLimit ? .tooDeep : .malformed, error.description)
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
        try Self.checkChannel(name)
        return name
    }

    private func channelValue(_ name: String) throws(CodecError) -> JSONValue {
        try Self.checkChannel(name)
        return .string(name)
    }

    private static func checkPublishKey(_ key: String) throws(CodecError) {
        guard !key.isEmpty, key.utf8.count <= 64 else { throw CodecError(.missingField, "'key' must be 1 to 64 bytes") }
    }

    static func checkChannel(_ name: String) throws(CodecError) {
        guard !name.isEmpty, name.utf8.count <= 256 else { throw CodecError(.missingField, "'channel' must be 1 to 256 bytes") }
    }

    private func requestID(_ key: String, in fields: [String: JSONValue]) throws(CodecError) -> RequestID {
        try sequence(key, in: fields)
    }

    private func sequence(_ key: String, in fields: [String: JSONValue]) throws(CodecError) -> UInt64 {
        guard let value = fields[key]?.unsignedIntegerValue else { throw CodecError(.missingField, "'\(key)' must be a whole number from 0 to 2^64-1") }
        return value
    }

    private func optionalSequence(_ key: String, in fields: [String: JSONValue]) throws(CodecError) -> UInt64? {
        guard let value = fields[key], value != .null else { return nil }
        return try sequence(key, in: fields)
    }
}

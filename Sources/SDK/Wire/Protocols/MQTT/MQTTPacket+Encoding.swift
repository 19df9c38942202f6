extension MQTTPacket {
    /// The packet's bytes, fixed header included, as `version` writes it.
    package func encoded(_ version: MQTTVersion) -> [UInt8] {
        var body = MQTTWriter()
        let v5 = version == .v5
        var flags: UInt8 = 0
        switch self {
        case .connect(let connect):
            body.string("MQTT")
            body.byte(version.rawValue)
            var connectFlags: UInt8 = connect.cleanStart ? 0x02 : 0
            if connect.username != nil { connectFlags |= 0x80 }
            if connect.password != nil { connectFlags |= 0x40 }
            body.byte(connectFlags)
            body.uint16(connect.keepAlive)
            if v5 { body.properties(connect.properties) }
            body.string(connect.clientID)
            if let username = connect.username { body.string(username) }
            if let password = connect.password { body.binary(password) }
        case .connack(let sessionPresent, let code, let properties):
            body.byte(sessionPresent ? 1 : 0)
            body.byte(code)
            if v5 { body.properties(properties) }
        case .publish(let publish):
            flags = (publish.duplicate ? 0x08 : 0) | (publish.qos.rawValue << 1) | (publish.retain ? 0x01 : 0)
            body.string(publish.topic)
            if publish.qos != .atMostOnce { body.uint16(publish.packetID ?? 0) }
            if v5 { body.properties(MQTTProperties()) }
            body.bytes(publish.payload)
        case .puback(let id, let code):
            body.uint16(id)
            if v5, code != 0 { body.byte(code) }
        case .subscribe(let id, let filters):
            flags = 0x02
            body.uint16(id)
            if v5 { body.properties(MQTTProperties()) }
            for (filter, qos) in filters {
                body.string(filter)
                body.byte(qos.rawValue)
            }
        case .suback(let id, let codes):
            body.uint16(id)
            if v5 { body.properties(MQTTProperties()) }
            body.bytes(codes)
        case .unsubscribe(let id, let filters):
            flags = 0x02
            body.uint16(id)
            if v5 { body.properties(MQTTProperties()) }
            for filter in filters { body.string(filter) }
        case .unsuback(let id, let codes):
            body.uint16(id)
            if v5 {
                body.properties(MQTTProperties())
                body.bytes(codes)
            }
        case .pingreq, .pingresp:
            break
        case .disconnect(let code, let properties):
            if v5, code != 0 || properties != MQTTProperties() {
                body.byte(code)
                body.properties(properties)
            }
        }
        var packet: [UInt8] = [type << 4 | flags]
        MQTTWriter.appendVariableInteger(body.bytes.count, to: &packet)
        packet += body.bytes
        return packet
    }
}

/// Builds a packet's variable header and payload.
struct MQTTWriter {
    var bytes: [UInt8] = []

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func bytes(_ values: [UInt8]) { bytes += values }

    mutating func uint16(_ value: UInt16) {
        bytes.append(UInt8(value >> 8))
        bytes.append(UInt8(value & 0xFF))
    }

    mutating func uint32(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8((value >> UInt32(shift)) & 0xFF)) }
    }

    /// A length-prefixed UTF-8 string (callers keep strings within 65,535 bytes).
    mutating func string(_ value: String) { binary(Array(value.utf8)) }

    mutating func binary(_ value: [UInt8]) {
        uint16(UInt16(clamping: value.count))
        bytes += value.prefix(Int(UInt16.max))
    }

    mutating func properties(_ properties: MQTTProperties) {
        var inner = MQTTWriter()
        if let value = properties.sessionExpiry { inner.byte(0x11); inner.uint32(value) }
        if let value = properties.assignedClientID { inner.byte(0x12); inner.string(value) }
        if let value = properties.serverKeepAlive { inner.byte(0x13); inner.uint16(value) }
        if let value = properties.reasonString { inner.byte(0x1F); inner.string(value) }
        if let value = properties.receiveMaximum { inner.byte(0x21); inner.uint16(value) }
        if let value = properties.maximumPacketSize { inner.byte(0x27); inner.uint32(value) }
        Self.appendVariableInteger(inner.bytes.count, to: &bytes)
        bytes += inner.bytes
    }

    /// MQTT's variable byte integer: 7 bits per byte, least significant first, at most 4 bytes.
    static func appendVariableInteger(_ value: Int, to bytes: inout [UInt8]) {
        var value = value
        repeat {
            var byte = UInt8(value & 0x7F)
            value >>= 7
            if value > 0 { byte |= 0x80 }
            bytes.append(byte)
        } while value > 0
    }
}

/// Why bytes are not MQTT.
package struct MQTTDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    package var description: String

    package init(_ description: String) { self.description = description }
}

/// Turns a byte stream into packets. WebSocket frames and packets are n:m (MQTT §6.0.0-2): a
/// frame may hold several packets, or part of one; what is left over waits for the next frame.
package struct MQTTStreamDecoder: Sendable {
    package let version: MQTTVersion
    /// The largest packet accepted (fixed header included); a larger one is an error before any
    /// of it is buffered beyond this.
    package let maximumPacketSize: Int
    private var buffer: [UInt8] = []
    private var start = 0

    package init(version: MQTTVersion, maximumPacketSize: Int) {
        self.version = version
        self.maximumPacketSize = maximumPacketSize
    }

    /// Bytes waiting for the rest of their packet.
    package var pendingByteCount: Int { buffer.count - start }

    /// Appends `bytes` and returns every packet they complete, in order — and, when the stream
    /// stops being MQTT, the packets before that point and why (nothing after it is decoded).
    package mutating func decode(_ bytes: [UInt8]) -> (packets: [MQTTPacket], failure: MQTTDecodingError?) {
        buffer += bytes
        var packets: [MQTTPacket] = []
        do {
            while let (header, length, headerSize) = try nextHeader() {
                guard buffer.count - start >= headerSize + length else { break }
                let bodyStart = start + headerSize
                packets.append(try MQTTPacket.decode(header: header, body: buffer[bodyStart..<bodyStart + length], version: version))
                start = bodyStart + length
            }
        } catch {
            buffer = []
            start = 0
            return (packets, error)
        }
        if start == buffer.count {
            buffer = []
            start = 0
        } else if start > 4096, start * 2 > buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
        return (packets, nil)
    }

    /// ``decode(_:)``, throwing when the stream stops being MQTT.
    package mutating func append(_ bytes: [UInt8]) throws(MQTTDecodingError) -> [MQTTPacket] {
        let (packets, failure) = decode(bytes)
        if let failure { throw failure }
        return packets
    }

    /// The next packet's first byte, remaining length and header size, once all of the header
    /// is here.
    private func nextHeader() throws(MQTTDecodingError) -> (UInt8, Int, Int)? {
        guard buffer.count - start >= 2 else { return nil }
        var length = 0
        var index = start + 1
        for shift in stride(from: 0, to: 28, by: 7) {
            guard index < buffer.count else { return nil }
            let byte = buffer[index]
            length |= Int(byte & 0x7F) << shift
            index += 1
            if byte & 0x80 == 0 {
                let headerSize = index - start
                if headerSize > 2, byte == 0 { throw MQTTDecodingError("a remaining length not in its shortest encoding") }
                guard headerSize + length <= maximumPacketSize else {
                    throw MQTTDecodingError("a \(headerSize + length)-byte packet, above the \(maximumPacketSize)-byte maximum")
                }
                return (buffer[start], length, headerSize)
            }
        }
        throw MQTTDecodingError("a remaining length longer than 4 bytes")
    }
}

extension MQTTPacket {
    /// One packet from its first byte and its body (the remaining length's bytes).
    package static func decode(header: UInt8, body: ArraySlice<UInt8>, version: MQTTVersion) throws(MQTTDecodingError) -> MQTTPacket {
        var reader = MQTTReader(body)
        let v5 = version == .v5
        let flags = header & 0x0F
        let type = header >> 4
        let expectedFlags: UInt8 = (type == 8 || type == 10) ? 0x02 : 0
        if type != 3, flags != expectedFlags { throw MQTTDecodingError("packet type \(type) with reserved flags \(flags)") }
        let packet: MQTTPacket
        switch type {
        case 1:
            guard try reader.string() == "MQTT" else { throw MQTTDecodingError("a CONNECT for another protocol") }
            let level = try reader.byte()
            guard level == version.rawValue else { throw MQTTDecodingError("a CONNECT at protocol level \(level)") }
            let connectFlags = try reader.byte()
            guard connectFlags & 0x3D == 0 else { throw MQTTDecodingError("CONNECT flags \(connectFlags) (a will, or reserved bits)") }
            let keepAlive = try reader.uint16()
            let properties = v5 ? try reader.properties() : MQTTProperties()
            let clientID = try reader.string()
            let username = connectFlags & 0x80 != 0 ? try reader.string() : nil
            let password = connectFlags & 0x40 != 0 ? try reader.binary() : nil
            packet = .connect(MQTTConnect(clientID: clientID, cleanStart: connectFlags & 0x02 != 0, keepAlive: keepAlive, username: username, password: password, properties: properties))
        case 2:
            let acknowledgeFlags = try reader.byte()
            guard acknowledgeFlags & 0xFE == 0 else { throw MQTTDecodingError("CONNACK flags \(acknowledgeFlags)") }
            let code = try reader.byte()
            // A 3.1.1 broker answers an MQTT 5 CONNECT in 3.1.1 (no properties): code 1.
            packet = .connack(sessionPresent: acknowledgeFlags == 1, code: code, properties: v5 && !reader.isAtEnd ? try reader.properties() : MQTTProperties())
        case 3:
            guard let qos = MQTTQoS(rawValue: (flags >> 1) & 0x03) else { throw MQTTDecodingError("a PUBLISH at QoS \((flags >> 1) & 0x03)") }
            let topic = try reader.string()
            let id = qos == .atMostOnce ? nil : try reader.uint16()
            if id == 0 { throw MQTTDecodingError("a PUBLISH with packet id 0") }
            if qos == .atMostOnce, flags & 0x08 != 0 { throw MQTTDecodingError("a QoS 0 PUBLISH marked DUP") }
            if v5 { _ = try reader.properties() }
            packet = .publish(MQTTPublish(topic: topic, payload: reader.rest(), qos: qos, duplicate: flags & 0x08 != 0, retain: flags & 0x01 != 0, packetID: id))
        case 4:
            let id = try reader.uint16()
            let code = v5 && !reader.isAtEnd ? try reader.byte() : 0
            if v5, !reader.isAtEnd { _ = try reader.properties() }
            packet = .puback(id, code: code)
        case 8, 10:
            let id = try reader.uint16()
            if v5 { _ = try reader.properties() }
            var filters: [(filter: String, qos: MQTTQoS)] = []
            var names: [String] = []
            while !reader.isAtEnd {
                let filter = try reader.string()
                if type == 8 {
                    guard let qos = MQTTQoS(rawValue: try reader.byte() & 0x03) else { throw MQTTDecodingError("a SUBSCRIBE at QoS 2") }
                    filters.append((filter, qos))
                } else {
                    names.append(filter)
                }
            }
            guard !filters.isEmpty || !names.isEmpty else { throw MQTTDecodingError("a (UN)SUBSCRIBE without a filter") }
            packet = type == 8 ? .subscribe(id, filters) : .unsubscribe(id, names)
        case 9, 11:
            let id = try reader.uint16()
            if v5 { _ = try reader.properties() }
            let codes = reader.rest()
            if type == 9, codes.isEmpty { throw MQTTDecodingError("a SUBACK without a return code") }
            if type == 11, !v5, !codes.isEmpty { throw MQTTDecodingError("a 3.1.1 UNSUBACK longer than its packet id") }
            packet = type == 9 ? .suback(id, codes: codes) : .unsuback(id, codes: codes)
        case 12:
            packet = .pingreq
        case 13:
            packet = .pingresp
        case 14:
            let code = v5 && !reader.isAtEnd ? try reader.byte() : 0
            let properties = v5 && !reader.isAtEnd ? try reader.properties() : MQTTProperties()
            packet = .disconnect(code: code, properties: properties)
        default:
            throw MQTTDecodingError("packet type \(type), which Tether does not speak (QoS 2, AUTH, or reserved)")
        }
        guard reader.isAtEnd else { throw MQTTDecodingError("\(reader.remaining) bytes after a type \(type) packet") }
        return packet
    }
}

/// Reads a packet's body; every read checks the bounds.
struct MQTTReader {
    private var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    var isAtEnd: Bool { bytes.isEmpty }
    var remaining: Int { bytes.count }

    mutating func byte() throws(MQTTDecodingError) -> UInt8 {
        guard let value = bytes.popFirst() else { throw MQTTDecodingError("a packet shorter than its fields") }
        return value
    }

    mutating func uint16() throws(MQTTDecodingError) -> UInt16 {
        UInt16(try byte()) << 8 | UInt16(try byte())
    }

    mutating func uint32() throws(MQTTDecodingError) -> UInt32 {
        UInt32(try uint16()) << 16 | UInt32(try uint16())
    }

    mutating func binary() throws(MQTTDecodingError) -> [UInt8] {
        let count = Int(try uint16())
        guard bytes.count >= count else { throw MQTTDecodingError("a field longer than its packet") }
        defer { bytes.removeFirst(count) }
        return Array(bytes.prefix(count))
    }

    /// A UTF-8 string: valid, and without U+0000 (MQTT §1.5.3).
    mutating func string() throws(MQTTDecodingError) -> String {
        let raw = try binary()
        let text = String(decoding: raw, as: UTF8.self)
        guard !raw.contains(0), text.utf8.elementsEqual(raw) else { throw MQTTDecodingError("a string that is not valid UTF-8") }
        return text
    }

    mutating func variableInteger() throws(MQTTDecodingError) -> Int {
        var value = 0
        for shift in stride(from: 0, to: 28, by: 7) {
            let byte = try byte()
            value |= Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
        }
        throw MQTTDecodingError("a variable integer longer than 4 bytes")
    }

    mutating func rest() -> [UInt8] {
        defer { bytes = [] }
        return Array(bytes)
    }

    /// An MQTT 5 property block: the ones Tether reads, the others skipped by their type.
    mutating func properties() throws(MQTTDecodingError) -> MQTTProperties {
        let length = try variableInteger()
        guard bytes.count >= length else { throw MQTTDecodingError("properties longer than their packet") }
        var inner = MQTTReader(bytes.prefix(length))
        bytes.removeFirst(length)
        var properties = MQTTProperties()
        while !inner.isAtEnd {
            let id = try inner.variableInteger()
            switch id {
            case 0x11: properties.sessionExpiry = try inner.uint32()
            case 0x12: properties.assignedClientID = try inner.string()
            case 0x13: properties.serverKeepAlive = try inner.uint16()
            case 0x1F: properties.reasonString = try inner.string()
            case 0x21: properties.receiveMaximum = try inner.uint16()
            case 0x27: properties.maximumPacketSize = try inner.uint32()
            case 0x01, 0x17, 0x19, 0x24, 0x25, 0x28, 0x29, 0x2A: _ = try inner.byte()
            case 0x22, 0x23: _ = try inner.uint16()
            case 0x02, 0x18: _ = try inner.uint32()
            case 0x0B: _ = try inner.variableInteger()
            case 0x03, 0x08, 0x15, 0x1A, 0x1C: _ = try inner.string()
            case 0x09, 0x16: _ = try inner.binary()
            case 0x26: _ = (try inner.string(), try inner.string())
            default: throw MQTTDecodingError("unknown MQTT 5 property \(id)")
            }
        }
        return properties
    }
}

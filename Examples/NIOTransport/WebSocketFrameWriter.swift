package import NIOCore
package import SDK

/// A batch of whole frames as RFC 6455 §5.2 puts them on the wire, written into one buffer.
/// The session hands the transport a replay's hundred frames at once; written one by one, each
/// took its own pass through the channel pipeline, a copy of its payload to mask it, and a
/// system call for its masking key.
package enum WebSocketFrameWriter {
    /// Writes `frames` (FIN set, unfragmented) into `buffer`. A client's frames are `masked`,
    /// each with its own key from `keys`: four bytes of the system's generator per frame.
    package static func write<Keys: RandomNumberGenerator>(_ frames: [TransportFrame], masked: Bool, keys: inout Keys, into buffer: inout ByteBuffer) {
        // Two keys from each draw: its low half first.
        var spareKey: UInt32?
        func nextKey() -> UInt32 {
            if let key = spareKey.take() { return key }
            let word: UInt64 = keys.next()
            spareKey = UInt32(truncatingIfNeeded: word >> 32)
            return UInt32(truncatingIfNeeded: word)
        }
        for frame in frames {
            let key = masked ? nextKey() : nil
            switch frame {
            case .text(let text): write(opcode: 0x1, length: text.utf8.count, key: key, into: &buffer) { $0.writeString(text) }
            case .binary(let bytes): write(opcode: 0x2, length: bytes.count, key: key, into: &buffer) { $0.writeBytes(bytes) }
            }
        }
    }

    /// The bytes ``write(_:masked:keys:into:)`` writes for `frames`.
    package static func byteCount(of frames: [TransportFrame], masked: Bool) -> Int {
        frames.reduce(0) { total, frame in
            let length = frame.byteCount
            return total + length + (length <= 125 ? 2 : length <= 0xFFFF ? 4 : 10) + (masked ? 4 : 0)
        }
    }

    /// One frame: its header, then its payload (`writePayload` writes `length` bytes), masked.
    private static func write(opcode: UInt8, length: Int, key: UInt32?, into buffer: inout ByteBuffer, _ writePayload: (inout ByteBuffer) -> Void) {
        writeHeader(opcode: opcode, length: length, key: key, into: &buffer)
        let start = buffer.writerIndex
        writePayload(&buffer)
        if let key { mask(&buffer, from: start, with: key) }
    }

    private static func writeHeader(opcode: UInt8, length: Int, key: UInt32?, into buffer: inout ByteBuffer) {
        let maskBit: UInt8 = key == nil ? 0 : 0x80
        buffer.writeInteger(0x80 | opcode)
        if length <= 125 {
            buffer.writeInteger(maskBit | UInt8(length))
        } else if length <= 0xFFFF {
            buffer.writeInteger(maskBit | 126)
            buffer.writeInteger(UInt16(length))
        } else {
            buffer.writeInteger(maskBit | 127)
            buffer.writeInteger(UInt64(length))
        }
        if let key { buffer.writeInteger(key) }
    }

    /// XORs the bytes from `start` to the end with `key` (its first byte first, §5.3).
    private static func mask(_ buffer: inout ByteBuffer, from start: Int, with key: UInt32) {
        let offset = start - buffer.readerIndex
        buffer.withUnsafeMutableReadableBytes { bytes in
            for index in offset..<bytes.count {
                bytes[index] ^= UInt8(truncatingIfNeeded: key >> (24 - 8 * UInt32((index - offset) & 3)))
            }
        }
    }
}

/// The store's file format, pure: a header, then records appended one after another, each with
/// its length and a checksum. Whatever was written before a crash reads back whole or not at
/// all: a record cut short by a kill, or one whose bytes never reached the disk, fails its
/// checksum and is not read — it and what follows it are reported, never taken as valid.
///
/// ```
/// header  "TTHR" · version (UInt16, big-endian) · flags (UInt16, 0) · CRC-32 of the 8 bytes before
/// record  length (UInt32, big-endian) · CRC-32 of the length · CRC-32 of the payload · payload
/// ```
///
/// The length has a checksum of its own, so a damaged length is told from a record cut short:
/// only the end of the file can be torn (cut by a kill, or blocks the disk had not written yet,
/// which read as zeros); a record that fails anywhere else is damage, and reported as such.
enum StoreLog {
    /// The bytes a store file starts with.
    static let magic: [UInt8] = Array("TTHR".utf8)
    /// The format this build writes and reads.
    static let version: UInt16 = 1
    static let headerSize = 12
    static let recordHeaderSize = 12
    /// The largest record read: a length above it is damage, not a record.
    static let maxRecordSize = 64 << 20

    /// What reading a file found.
    struct Contents: Equatable {
        /// The payloads of the records that read back whole, in order.
        var records: [[UInt8]]
        /// How many bytes of the file those hold, with the header: where the next record goes
        /// once the rest is cut off.
        var validLength: Int
        var tail: Tail
        /// After damage: the records found whole beyond it (each passes both its checksums), in
        /// order. What lay between is lost, so they are not part of ``records``; the session
        /// tells the app about the publishes among them.
        var salvaged: [[UInt8]] = []
    }

    /// What follows the last record that read back whole.
    enum Tail: Equatable {
        /// Nothing: the file ends there.
        case clean
        /// A record cut short at the end of the file (a kill while it was written): it was
        /// never acknowledged as stored, so nothing the app was told about is lost.
        case torn(discardedBytes: Int)
        /// A record in the middle of the file that fails its checksum, with more after it: what
        /// was stored from there on is lost (damage, not a kill).
        case corrupted(atOffset: Int, discardedBytes: Int)
    }

    /// Why a file is not read at all (and must be left as it is).
    enum ReadError: Error, Equatable {
        /// It does not start like a store file.
        case notAStore
        /// A newer release wrote it, in a format this one does not know.
        case newerVersion(UInt16)
        /// An older format this release no longer reads.
        case olderVersion(UInt16)
    }

    /// The header of a new file.
    static func header() -> [UInt8] {
        var bytes = magic
        append(version, to: &bytes)
        append(UInt16(0), to: &bytes)
        append(CRC32.checksum(bytes), to: &bytes)
        return bytes
    }

    /// A record holding `payload`, to append.
    static func record(_ payload: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(recordHeaderSize + payload.count)
        append(UInt32(payload.count), to: &bytes)
        append(CRC32.checksum(bytes), to: &bytes)
        append(CRC32.checksum(payload), to: &bytes)
        bytes += payload
        return bytes
    }

    /// Reads a whole file. An empty file, or one cut short inside its header (a kill while it
    /// was made), holds nothing and is torn; anything else that does not start with a valid
    /// header is not a store, and is not read.
    static func read(_ bytes: [UInt8]) throws(ReadError) -> Contents {
        guard bytes.count >= headerSize else {
            // A header cut short: what there is must be the start of ours.
            guard bytes.elementsEqual(header().prefix(bytes.count)) else { throw .notAStore }
            return Contents(records: [], validLength: 0, tail: bytes.isEmpty ? .clean : .torn(discardedBytes: bytes.count))
        }
        guard bytes.prefix(4).elementsEqual(magic), readUInt32(bytes, at: 8) == CRC32.checksum(bytes[0..<8]) else { throw .notAStore }
        let fileVersion = readUInt16(bytes, at: 4)
        if fileVersion > version { throw .newerVersion(fileVersion) }
        if fileVersion < version { throw .olderVersion(fileVersion) }
        var records: [[UInt8]] = []
        var offset = headerSize
        while offset < bytes.count {
            let left = bytes.count - offset
            guard left >= recordHeaderSize else { return Contents(records: records, validLength: offset, tail: .torn(discardedBytes: left)) }
            let length = Int(readUInt32(bytes, at: offset))
            let end = offset + recordHeaderSize + length
            let lengthIntact = readUInt32(bytes, at: offset + 4) == CRC32.checksum(bytes[offset..<(offset + 4)])
            // Blocks the disk had not written when the app was killed read as zeros, to the end.
            let unwritten = bytes[offset...].allSatisfy { $0 == 0 }
            guard lengthIntact, length <= maxRecordSize else {
                if unwritten { return Contents(records: records, validLength: offset, tail: .torn(discardedBytes: left)) }
                return Contents(records: records, validLength: offset, tail: .corrupted(atOffset: offset, discardedBytes: left), salvaged: salvage(bytes, from: offset + 1))
            }
            guard end <= bytes.count else {
                // An intact length that runs past the end: cut short.
                return Contents(records: records, validLength: offset, tail: .torn(discardedBytes: left))
            }
            let payload = bytes[(offset + recordHeaderSize)..<end]
            guard readUInt32(bytes, at: offset + 8) == CRC32.checksum(payload) else {
                // The file's last record, whose bytes did not all reach the disk, is torn; one
                // with records after it is damage.
                if end == bytes.count { return Contents(records: records, validLength: offset, tail: .torn(discardedBytes: left)) }
                return Contents(records: records, validLength: offset, tail: .corrupted(atOffset: offset, discardedBytes: left), salvaged: salvage(bytes, from: offset + 1))
            }
            records.append(Array(payload))
            offset = end
        }
        return Contents(records: records, validLength: offset, tail: .clean)
    }

    /// The records that read back whole from `start` on, after damage: at each offset, a length
    /// whose checksum matches and a payload whose checksum matches (a chance of about 2⁻⁶⁴ for
    /// bytes that are not a record); the search goes on byte by byte where they do not.
    static func salvage(_ bytes: [UInt8], from start: Int) -> [[UInt8]] {
        var found: [[UInt8]] = []
        var offset = start
        while offset + recordHeaderSize <= bytes.count {
            let length = Int(readUInt32(bytes, at: offset))
            let end = offset + recordHeaderSize + length
            guard length <= maxRecordSize, end <= bytes.count,
                readUInt32(bytes, at: offset + 4) == CRC32.checksum(bytes[offset..<(offset + 4)]),
                readUInt32(bytes, at: offset + 8) == CRC32.checksum(bytes[(offset + recordHeaderSize)..<end])
            else {
                offset += 1
                continue
            }
            found.append(Array(bytes[(offset + recordHeaderSize)..<end]))
            offset = end
        }
        return found
    }

    private static func append(_ value: UInt16, to bytes: inout [UInt8]) {
        bytes += [UInt8(value >> 8), UInt8(value & 0xFF)]
    }

    private static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes += [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    private static func readUInt16(_ bytes: [UInt8], at offset: Int) -> UInt16 {
        UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    private static func readUInt32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (offset..<(offset + 4)).reduce(UInt32(0)) { $0 << 8 | UInt32(bytes[$1]) }
    }
}

@testable import SDK
import Testing

/// The store's file format: whatever was written before a kill reads back whole or not at all,
/// at every byte a file can be cut at and under every flipped byte; versions and foreign files
/// are typed refusals, never an empty store.
@Suite("StoreLog: the crash-safe file format")
struct StoreLogTests {
    let payloads: [[UInt8]] = [Array("first".utf8), [], Array(repeating: 0xAB, count: 300), Array("last".utf8)]

    var file: [UInt8] { StoreLog.header() + payloads.flatMap(StoreLog.record) }

    /// Where each record ends in `file`.
    var recordEnds: [Int] {
        var end = StoreLog.headerSize
        return payloads.map { payload in
            end += StoreLog.recordHeaderSize + payload.count
            return end
        }
    }

    @Test("a whole file reads back every record, in order, with a clean tail")
    func whole() throws {
        let contents = try StoreLog.read(file)
        #expect(contents == StoreLog.Contents(records: payloads, validLength: file.count, tail: .clean))
        #expect(try StoreLog.read([]) == StoreLog.Contents(records: [], validLength: 0, tail: .clean))
        #expect(try StoreLog.read(StoreLog.header()) == StoreLog.Contents(records: [], validLength: StoreLog.headerSize, tail: .clean))
    }

    @Test("cut at every byte: exactly the records that ended before the cut, the rest reported torn, never a partial record")
    func everyTruncation() throws {
        let file = file
        let ends = recordEnds
        for cut in 0..<file.count {
            let contents = try StoreLog.read(Array(file.prefix(cut)))
            let whole = ends.filter { $0 <= cut }.count
            #expect(contents.records == Array(payloads.prefix(whole)), "cut at \(cut)")
            let valid = cut < StoreLog.headerSize ? 0 : (ends.last { $0 <= cut } ?? StoreLog.headerSize)
            #expect(contents.validLength == valid, "cut at \(cut)")
            #expect(contents.tail == (cut == valid ? .clean : .torn(discardedBytes: cut - valid)), "cut at \(cut)")
        }
    }

    @Test("a flipped bit anywhere: the header's is a refusal; a record's loses that record and what follows, and says so — never a changed payload read as valid; the records after it are found whole, apart")
    func everyFlippedBit() throws {
        let file = file
        let ends = recordEnds
        for offset in 0..<file.count {
            for bit in [0, 7] {
                var damaged = file
                damaged[offset] ^= 1 << bit
                if offset < StoreLog.headerSize {
                    #expect(throws: StoreLog.ReadError.self, "header byte \(offset)") { try StoreLog.read(damaged) }
                    continue
                }
                let contents = try StoreLog.read(damaged)
                let hit = ends.firstIndex { offset < $0 }!
                let start = hit == 0 ? StoreLog.headerSize : ends[hit - 1]
                #expect(contents.records == Array(payloads.prefix(hit)), "byte \(offset) bit \(bit)")
                #expect(contents.validLength == start)
                let discarded = file.count - start
                switch contents.tail {
                case .torn(let bytes):
                    #expect(hit == payloads.count - 1 && bytes == discarded, "only the last record can read as torn (byte \(offset))")
                case .corrupted(let at, let bytes):
                    #expect(at == start && bytes == discarded)
                    #expect(contents.salvaged == Array(payloads[(hit + 1)...]), "every record after the damaged one is found (byte \(offset) bit \(bit))")
                case .clean:
                    Issue.record("byte \(offset) bit \(bit): damage read as a clean file")
                }
            }
        }
    }

    @Test("a record's length past the largest record is damage, not a record to wait for")
    func absurdLength() throws {
        let length: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF]
        let crc = CRC32.checksum(length)
        var damaged = StoreLog.header() + StoreLog.record(Array("ok".utf8))
        damaged += length + [UInt8(crc >> 24), UInt8((crc >> 16) & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8(crc & 0xFF), 0, 0, 0, 0]
        let contents = try StoreLog.read(damaged)
        #expect(contents.records == [Array("ok".utf8)])
        #expect(contents.tail == .corrupted(atOffset: StoreLog.headerSize + 14, discardedBytes: 12))
    }

    @Test("blocks not yet written when the app was killed (zeros to the end) are a torn tail, however many")
    func zeroFilledTail() throws {
        for zeros in [1, 11, 12, 13, 4096] {
            let contents = try StoreLog.read(file + Array(repeating: 0, count: zeros))
            #expect(contents.records == payloads && contents.validLength == file.count && contents.tail == .torn(discardedBytes: zeros), "\(zeros) zeros")
        }
        // Zeros in the middle, with a record after them, are damage.
        let ends = recordEnds
        var damaged = file
        for offset in ends[0]..<ends[1] { damaged[offset] = 0 }
        let contents = try StoreLog.read(damaged)
        #expect(contents.tail == .corrupted(atOffset: ends[0], discardedBytes: file.count - ends[0]))
        #expect(contents.salvaged == Array(payloads[2...]), "found beyond the zeros")
    }

    @Test("versions and foreign files are refused, typed: a newer format, an older one, another file, a header cut short that is not ours")
    func refusals() {
        func withVersion(_ version: UInt16) -> [UInt8] {
            var header = StoreLog.magic + [UInt8(version >> 8), UInt8(version & 0xFF), 0, 0]
            let crc = CRC32.checksum(header)
            header += [UInt8(crc >> 24), UInt8((crc >> 16) & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8(crc & 0xFF)]
            return header + StoreLog.record([1])
        }
        #expect(throws: StoreLog.ReadError.newerVersion(2)) { try StoreLog.read(withVersion(2)) }
        #expect(throws: StoreLog.ReadError.olderVersion(0)) { try StoreLog.read(withVersion(0)) }
        #expect(throws: StoreLog.ReadError.notAStore) { try StoreLog.read(Array("{\"outbox\": []}".utf8)) }
        #expect(throws: StoreLog.ReadError.notAStore) { try StoreLog.read(Array("TX".utf8)) }
    }

    @Test("CRC-32 is zlib's (check value of \"123456789\"), and continues across parts")
    func checksum() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum(Array("6789".utf8), continuing: CRC32.checksum(Array("12345".utf8))) == 0xCBF4_3926)
    }
}

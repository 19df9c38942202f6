import Foundation
@testable import SDK
import Testing

/// The file store on a real file system: records kept across handles, a kill's torn end cut
/// off, damage reported with the original kept, and every file it cannot read left untouched.
@Suite("FileSessionStore: one file, crash-safe")
struct FileSessionStoreTests {
    /// A fresh directory for one test, removed after it.
    private func withDirectory(_ body: (URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory)
    }

    private func data(_ text: String) -> Data { Data(text.utf8) }

    @Test("a new directory is an empty store; appends and a replace are read back in order by the next handle")
    func roundTrip() throws {
        try withDirectory { directory in
            let store = FileSessionStore(directory: directory.appendingPathComponent("nested"))
            #expect(try store.load() == StoredRecords(records: []))
            try store.append([data("a"), data("b")])
            try store.append([data("c")])
            store.close()
            let next = FileSessionStore(directory: directory.appendingPathComponent("nested"))
            #expect(try next.load().records == [data("a"), data("b"), data("c")])
            try next.replace(with: [data("snapshot")])
            try next.append([data("d")])
            next.close()
            let third = FileSessionStore(directory: directory.appendingPathComponent("nested"))
            #expect(try third.load().records == [data("snapshot"), data("d")])
            third.close()
        }
    }

    @Test("a kill's torn end is cut off without a word, and the next append follows the last whole record")
    func tornEnd() throws {
        try withDirectory { directory in
            let store = FileSessionStore(directory: directory)
            _ = try store.load()
            try store.append([data("kept")])
            store.close()
            let whole = try Data(contentsOf: store.fileURL)
            try (whole + StoreLog.record(Array("cut".utf8)).prefix(9)).write(to: store.fileURL)
            let next = FileSessionStore(directory: directory)
            #expect(try next.load() == StoredRecords(records: [data("kept")]), "no loss: it was never reported stored")
            #expect(try Data(contentsOf: store.fileURL) == whole)
            try next.append([data("after")])
            next.close()
            let third = FileSessionStore(directory: directory)
            #expect(try third.load().records == [data("kept"), data("after")])
            third.close()
        }
    }

    @Test("damage in the middle: the records before it are read, the loss is reported with its size, and the damaged original is kept beside")
    func damage() throws {
        try withDirectory { directory in
            let store = FileSessionStore(directory: directory)
            _ = try store.load()
            try store.append([data("one"), data("two"), data("three")])
            store.close()
            var bytes = try Data(contentsOf: store.fileURL)
            let second = StoreLog.headerSize + StoreLog.recordHeaderSize + 3
            bytes[second + StoreLog.recordHeaderSize] ^= 0x20
            try bytes.write(to: store.fileURL)
            let next = FileSessionStore(directory: directory)
            let read = try next.load()
            #expect(read.records == [data("one")])
            #expect(read.salvaged == [data("three")], "found whole beyond the damage, apart from the records")
            let loss = try #require(read.loss)
            #expect(loss.bytes == bytes.count - second)
            let copy = try #require(loss.damagedCopy)
            #expect(try Data(contentsOf: copy) == bytes, "the original, untouched")
            try next.append([data("four")])
            next.close()
            let third = FileSessionStore(directory: directory)
            #expect(try third.load() == StoredRecords(records: [data("one"), data("four")]))
            third.close()
        }
    }

    @Test("a newer format, another file, a directory that is a file: typed, and nothing is changed")
    func refusals() throws {
        try withDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let file = directory.appendingPathComponent(FileSessionStore.fileName)
            var newer = StoreLog.magic + [0, 9, 0, 0]
            let crc = CRC32.checksum(newer)
            newer += [UInt8(crc >> 24), UInt8((crc >> 16) & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8(crc & 0xFF)]
            for (bytes, code) in [(Data(newer), SessionStoreError.Code.newerVersion), (Data("{\"outbox\":[]}".utf8), .notAStore)] {
                try bytes.write(to: file)
                let store = FileSessionStore(directory: directory)
                let error = #expect(throws: SessionStoreError.self) { try store.load() }
                #expect(error?.code == code)
                #expect(try Data(contentsOf: file) == bytes, "left as it is")
                #expect(throws: SessionStoreError.self, "nothing is written to a store that was not read") { try store.append([Data("x".utf8)]) }
                #expect(try Data(contentsOf: file) == bytes)
            }
            let notADirectory = FileSessionStore(directory: file)
            #expect(throws: SessionStoreError(.notWritable, "the store's directory \(file.path) is not a directory")) { try notADirectory.load() }
        }
    }

    @Test("two sessions of one process on one store: the second is refused until the first lets it go")
    func inUse() throws {
        try withDirectory { directory in
            let first = FileSessionStore(directory: directory)
            _ = try first.load()
            let second = FileSessionStore(directory: directory)
            let error = #expect(throws: SessionStoreError.self) { try second.load() }
            #expect(error?.code == .inUse)
            let again = #expect(throws: SessionStoreError.self, "one store value handed to two sessions") { try first.load() }
            #expect(again?.code == .inUse)
            first.close()
            #expect(try second.load().records.isEmpty)
            second.close()
        }
    }

    @Test("a full disk is diskFull, and the store is as it was before the write")
    func diskFull() throws {
        try withDirectory { directory in
            let store = FileSessionStore(directory: directory)
            _ = try store.load()
            try store.append([data("kept")])
            let whole = try Data(contentsOf: store.fileURL)
            // Writes to /dev/full fail as a full disk does.
            let keptAside = directory.appendingPathComponent("aside")
            try FileManager.default.moveItem(at: store.fileURL, to: keptAside)
            try FileManager.default.createSymbolicLink(atPath: store.fileURL.path, withDestinationPath: "/dev/full")
            let error = #expect(throws: SessionStoreError.self) { try store.append([data("lost")]) }
            #expect(error?.code == .diskFull)
            try FileManager.default.removeItem(at: store.fileURL)
            try FileManager.default.moveItem(at: keptAside, to: store.fileURL)
            #expect(try Data(contentsOf: store.fileURL) == whole)
            store.close()
        }
    }
}

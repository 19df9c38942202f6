#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
public import Foundation

/// A ``SessionStore`` in one file, `session.tether`, in a directory the app chooses (Foundation
/// and the C library only). Records are appended, with checksums, one write and one `fsync` per
/// call (the session groups what happened meanwhile into one call); a replace is written beside
/// the file, synced, and renamed over it. What a kill cut short is dropped at the next launch;
/// damage is reported and the damaged file kept beside it. Nothing it cannot read is ever
/// overwritten or deleted.
///
/// On iOS the file is protected `completeUntilFirstUserAuthentication`: readable whenever the
/// device has been unlocked once since it started, so an app the system launches in the
/// background (a push, a background refresh) can read its outbox while the screen is locked —
/// `complete` would make the file unreadable every time the device locks, and the outbox of an
/// app woken in the background unreadable exactly when it is needed. Before the first unlock it
/// is `notReadableYet`. The file is excluded from backups (a restored outbox would re-send what
/// another device sent) and no lock is held on it: the store is exclusive within the process
/// only (a file lock held while the app is suspended gets the app killed, `0xdead10cc`); an app
/// extension uses a directory of its own.
public final class FileSessionStore: SessionStore {
    /// The directory the file lives in.
    public let directory: URL
    /// The file.
    public var fileURL: URL { directory.appendingPathComponent(Self.fileName) }

    static let fileName = "session.tether"
    /// The paths of the stores open in this process.
    private static let openPaths = Locked(Set<String>())

    private struct State {
        var isOpen = false
        /// The file's valid length: where the next record goes (0: there is no file yet).
        var length = 0
    }

    private let state = Locked(State())

    /// A store in `directory` (made when first needed). Nothing is read before the session's
    /// `load()`.
    public init(directory: URL) {
        self.directory = directory
    }

    deinit { close() }

    public func load() throws(SessionStoreError) -> StoredRecords {
        let path = fileURL.path
        try claim(path)
        do throws(SessionStoreError) {
            return try read(path)
        } catch {
            release(path)
            throw error
        }
    }

    public func append(_ records: [Data]) throws(SessionStoreError) {
        guard !records.isEmpty else { return }
        let current = state.withLock { $0 }
        guard current.isOpen else { throw SessionStoreError(.notWritable, "the store was not loaded") }
        let bytes = records.flatMap { StoreLog.record(Array($0)) }
        guard current.length > 0 else {
            try writeWhole(StoreLog.header() + bytes)
            return
        }
        let path = fileURL.path
        let fd = open(path, O_WRONLY | O_APPEND)
        guard fd >= 0 else { throw Self.writeError(errno, "opening \(path)") }
        defer { closeFD(fd) }
        do throws(SessionStoreError) {
            try Self.write(bytes, to: fd, path: path)
            guard fsync(fd) == 0 else { throw Self.writeError(errno, "syncing \(path)") }
        } catch {
            // What was written of a record would be read as a torn tail, and what followed it as
            // damage: cut it off now.
            _ = ftruncate(fd, off_t(current.length))
            throw error
        }
        state.withLock { $0.length = current.length + bytes.count }
    }

    public func replace(with records: [Data]) throws(SessionStoreError) {
        guard state.withLock({ $0.isOpen }) else { throw SessionStoreError(.notWritable, "the store was not loaded") }
        try writeWhole(StoreLog.header() + records.flatMap { StoreLog.record(Array($0)) })
    }

    public func close() {
        let wasOpen = state.withLock { state in
            defer { state.isOpen = false }
            return state.isOpen
        }
        if wasOpen { release(fileURL.path) }
    }

    // MARK: Internals

    private func claim(_ path: String) throws(SessionStoreError) {
        // One session per store: a file open already — by another store value, or by this one
        // handed to a second session — is refused.
        guard Self.openPaths.withLock({ $0.insert(path).inserted }) else {
            throw SessionStoreError(.inUse, "another session of this process has the store at \(path) open")
        }
        state.withLock { $0.isOpen = true }
    }

    private func release(_ path: String) {
        state.withLock { $0.isOpen = false }
        _ = Self.openPaths.withLock { $0.remove(path) }
    }

    private func read(_ path: String) throws(SessionStoreError) -> StoredRecords {
        let bytes: [UInt8]
        switch Self.readFile(path) {
        case .bytes(let read): bytes = read
        case .failed(let code) where code == ENOENT:
            state.withLock { $0.length = 0 }
            return StoredRecords(records: [])
        case .failed(let code) where code == ENOTDIR:
            throw SessionStoreError(.notWritable, "the store's directory \(directory.path) is not a directory")
        case .failed(let code) where code == EPERM || code == EACCES:
            throw SessionStoreError(.notReadableYet, "the store at \(path) cannot be read now (\(Self.describe(code))); on iOS, until the device is first unlocked")
        case .failed(let code):
            throw SessionStoreError(.notReadableYet, "the store at \(path) could not be read (\(Self.describe(code)))")
        }
        let contents: StoreLog.Contents
        do {
            contents = try StoreLog.read(bytes)
        } catch .newerVersion(let version) {
            throw SessionStoreError(.newerVersion, "the store at \(path) has format \(version), newer than this release reads (\(StoreLog.version)); it is left as it is")
        } catch .olderVersion(let version) {
            throw SessionStoreError(.notAStore, "the store at \(path) has format \(version), which this release no longer reads; it is left as it is")
        } catch {
            throw SessionStoreError(.notAStore, "\(path) is not a Tether store; it is left as it is")
        }
        let records = contents.records.map { Data($0) }
        switch contents.tail {
        case .clean:
            state.withLock { $0.length = contents.validLength }
            return StoredRecords(records: records)
        case .torn:
            // Never reported as stored: cut off, so that what comes next is not written behind it.
            guard truncate(path, off_t(contents.validLength)) == 0 else { throw Self.writeError(errno, "cutting the torn end off \(path)") }
            state.withLock { $0.length = contents.validLength }
            return StoredRecords(records: records)
        case .corrupted(let offset, let discarded):
            // Damage: the original is kept beside, and the records before it written anew.
            let copy = try keepDamaged(path)
            try writeWhole(StoreLog.header() + contents.records.flatMap(StoreLog.record))
            let loss = StoreLoss(bytes: discarded, reason: "a record at byte \(offset) failed its checksum", damagedCopy: copy)
            return StoredRecords(records: records, loss: loss, salvaged: contents.salvaged.map { Data($0) })
        }
    }

    /// Renames a damaged file aside: `session.tether.damaged-1`, `-2`, … (never over another).
    private func keepDamaged(_ path: String) throws(SessionStoreError) -> URL {
        for index in 1...1000 {
            let copy = path + ".damaged-\(index)"
            guard access(copy, F_OK) != 0 else { continue }
            guard rename(path, copy) == 0 else { throw Self.writeError(errno, "keeping the damaged \(path)") }
            return URL(fileURLWithPath: copy)
        }
        throw SessionStoreError(.notWritable, "1000 damaged copies of \(path) are kept already")
    }

    /// Writes `bytes` as the whole file: beside it, synced, renamed over it, the directory synced.
    private func writeWhole(_ bytes: [UInt8]) throws(SessionStoreError) {
        try makeDirectory()
        let path = fileURL.path
        let temporary = path + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw Self.writeError(errno, "creating \(temporary)") }
        do throws(SessionStoreError) {
            try Self.write(bytes, to: fd, path: temporary)
            guard fsync(fd) == 0 else { throw Self.writeError(errno, "syncing \(temporary)") }
        } catch {
            closeFD(fd)
            _ = unlink(temporary)
            throw error
        }
        closeFD(fd)
        protect(temporary)
        guard rename(temporary, path) == 0 else {
            let code = errno
            _ = unlink(temporary)
            throw Self.writeError(code, "renaming \(temporary) over \(path)")
        }
        let directoryFD = open(directory.path, O_RDONLY)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            closeFD(directoryFD)
        }
        state.withLock { $0.length = bytes.count }
    }

    private func makeDirectory() throws(SessionStoreError) {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw SessionStoreError(.notWritable, "the store's directory \(directory.path) cannot be made: \(error.localizedDescription)")
        }
    }

    /// iOS data protection and backup exclusion (see the type's documentation); nothing elsewhere.
    private func protect(_ path: String) {
        #if canImport(Darwin)
        try? FileManager.default.setAttributes([.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication], ofItemAtPath: path)
        var url = URL(fileURLWithPath: path)
        var values = URLResourceValues()
        values.isExcludedFromBackup = true
        try? url.setResourceValues(values)
        #endif
    }

    /// What reading a whole file gave: its bytes, or the C library's error number.
    private enum FileRead {
        case bytes([UInt8])
        case failed(Int32)
    }

    private static func readFile(_ path: String) -> FileRead {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return .failed(errno) }
        defer { closeFD(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { readFD(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failed(errno)
            }
            if count == 0 { return .bytes(bytes) }
            bytes += chunk[0..<count]
        }
    }

    private static func write(_ bytes: [UInt8], to fd: Int32, path: String) throws(SessionStoreError) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { writeFD(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                throw writeError(errno, "writing \(path)")
            }
            offset += count
        }
    }

    private static func writeError(_ code: Int32, _ doing: String) -> SessionStoreError {
        if code == ENOSPC || code == EDQUOT { return SessionStoreError(.diskFull, "the device is full (\(doing))") }
        return SessionStoreError(.notWritable, "\(doing): \(describe(code))")
    }

    private static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }
}

// The C library's `read`, `write` and `close`, under names the store's own methods do not hide
// (inside the class, `close` is its method).
private func readFD(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }
private func writeFD(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { write(fd, buffer, count) }
private func closeFD(_ fd: Int32) { _ = close(fd) }

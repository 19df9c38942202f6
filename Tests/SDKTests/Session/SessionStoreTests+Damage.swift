import Foundation
@testable import SDK
import SDKTesting
import Testing

/// Damage on the disk (not a kill): what the store lost is told, with the publishes whose fate
/// it may have held; those found beyond the damage are not lost.
extension SessionStoreTests {
    @Test("damage in the store's file: the publishes before and beyond it are listed with their count in storeLoss (their 'sent' record may be what was lost), sent again with their keys and applied once; the one in the damaged record is what is lost")
    func damagedStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-damage-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = TestServer()
        let first = Session(
            settings: try .testing { $0.store(FileSessionStore(directory: directory)) }, transport: server.transport(), clock: clock,
            lifecycle: LifecycleDriver(initialState: .background)
        )
        try await withRunningSession(first) { _ in
            for (count, text) in ["a", "b", "c"].enumerated() {
                Task { _ = try? await first.publish(.string(text), to: "room") }
                try await first.waitForOutboxCount(count + 1)
            }
            await clock.settle()
        }

        // A byte of "b"'s record flips on the disk.
        let file = directory.appendingPathComponent(FileSessionStore.fileName)
        var bytes = try [UInt8](Data(contentsOf: file))
        var offset = StoreLog.headerSize
        for payload in try StoreLog.read(bytes).records {
            if case .publish(let publish)? = StoreRecord.decoded(Data(payload)), publish.json == #""b""# {
                bytes[offset + StoreLog.recordHeaderSize + 2] ^= 0x01
                break
            }
            offset += StoreLog.recordHeaderSize + payload.count
        }
        try Data(bytes).write(to: file)
        let copy = directory.appendingPathComponent("copy")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        try Data(bytes).write(to: copy.appendingPathComponent(FileSessionStore.fileName))

        // Where a re-send would be a second publish, the app decides for each.
        let noKeys = Session(
            settings: try .testing(auto: false) { $0.serverProtocol(.adapter(NoKeyProtocol(), name: "no-keys")).store(FileSessionStore(directory: copy)) },
            transport: server.transport(), clock: clock
        )
        try await withRunningSession(noKeys) { _ in
            await clock.settle()
            #expect(await noKeys.earlierPublishes.map(\.state) == [.mayHaveBeenApplied, .mayHaveBeenApplied], "their 'sent' record may be what was lost")
        }

        let second = Session(settings: try .testing { $0.store(FileSessionStore(directory: directory)) }, transport: server.transport(), clock: clock)
        try await withRunningSession(second) { status in
            let outcomes = PatientReader(second.earlierPublishOutcomes)
            await clock.settle()
            let loss = try #require(second.storeLoss)
            let listed = await second.earlierPublishes
            #expect(listed.map(\.data) == ["a", "c"], "before the damage and found beyond it; \"b\" is what was lost")
            #expect(loss.uncertainPublishes == listed.map(\.id))
            #expect(loss.description.contains("2 publishes"), "\(loss)")
            try await status.waitFor(.connected)
            var acknowledged = 0
            for _ in 0..<2 {
                if case .acknowledged? = await outcomes.next()?.state { acknowledged += 1 }
            }
            #expect(acknowledged == 2)
            #expect(server.latestSequence(of: "room") == 2, "each applied once")
        }
    }
}

import Foundation
import SDK

/// Wraps a transport and keeps every frame the session sends, so a test can say what went on
/// the wire (an MQTT resume sends no SUBSCRIBE).
final class RecordingTransport: Transport {
    private let base: any Transport
    /// What the session did with a connection, in order.
    enum Entry: Equatable {
        case sent(TransportFrame)
        case closed(CloseCode)
    }

    private let entries = Locked<[Entry]>([])

    init(_ base: any Transport) { self.base = base }

    /// Every frame sent so far, in order.
    var sent: [TransportFrame] { entries.withLock { $0.compactMap { if case .sent(let frame) = $0 { frame } else { nil } } } }

    /// Every frame sent and every close, in order.
    var log: [Entry] { entries.withLock { $0 } }

    /// Returns once the session has closed `count` connections (a real socket: waits up to 10 s).
    func waitForCloses(_ count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while entries.withLock({ $0.count { if case .closed = $0 { true } else { false } } }) < count {
            guard ContinuousClock.now < deadline else { throw RecordingTimeout(count: count) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    struct RecordingTimeout: Error, CustomStringConvertible {
        let count: Int
        var description: String { "the session did not close \(count) connection(s) within 10 s" }
    }

    func open(url: URL, headers: [String: String]) async throws -> any TransportConnection {
        Recorded(base: try await base.open(url: url, headers: headers), entries: entries)
    }

    func open(url: URL, headers: [String: String], subprotocols: [String]) async throws -> any TransportConnection {
        Recorded(base: try await base.open(url: url, headers: headers, subprotocols: subprotocols), entries: entries)
    }

    private final class Recorded: TransportConnection {
        let base: any TransportConnection
        let entries: Locked<[Entry]>

        init(base: any TransportConnection, entries: Locked<[Entry]>) {
            self.base = base
            self.entries = entries
        }

        var events: AsyncStream<TransportEvent> { base.events }
        var subprotocol: String? { base.subprotocol }

        func send(_ frame: TransportFrame) async throws {
            entries.withLock { $0.append(.sent(frame)) }
            try await base.send(frame)
        }

        func close(code: CloseCode, reason: String) async {
            entries.withLock { $0.append(.closed(code)) }
            await base.close(code: code, reason: reason)
        }
    }
}

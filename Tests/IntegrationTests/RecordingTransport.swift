import Foundation
import SDK

/// Wraps a transport and keeps every frame the session sends, so a test can say what went on
/// the wire (an MQTT resume sends no SUBSCRIBE).
final class RecordingTransport: Transport {
    private let base: any Transport
    private let frames = Locked<[TransportFrame]>([])

    init(_ base: any Transport) { self.base = base }

    /// Every frame sent so far, in order.
    var sent: [TransportFrame] { frames.withLock { $0 } }

    func open(url: URL, headers: [String: String]) async throws -> any TransportConnection {
        Recorded(base: try await base.open(url: url, headers: headers), frames: frames)
    }

    func open(url: URL, headers: [String: String], subprotocols: [String]) async throws -> any TransportConnection {
        Recorded(base: try await base.open(url: url, headers: headers, subprotocols: subprotocols), frames: frames)
    }

    private final class Recorded: TransportConnection {
        let base: any TransportConnection
        let frames: Locked<[TransportFrame]>

        init(base: any TransportConnection, frames: Locked<[TransportFrame]>) {
            self.base = base
            self.frames = frames
        }

        var events: AsyncStream<TransportEvent> { base.events }
        var subprotocol: String? { base.subprotocol }

        func send(_ frame: TransportFrame) async throws {
            frames.withLock { $0.append(frame) }
            try await base.send(frame)
        }

        func close(code: CloseCode, reason: String) async { await base.close(code: code, reason: reason) }
    }
}

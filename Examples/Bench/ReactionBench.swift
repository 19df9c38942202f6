import Foundation
import NIOTransport
import ReferenceServer
import SDK

/// `bench reaction`: the time from the app's background event to the close frame going out,
/// and from the foreground event to connected (socket, upgrade, authentication), over many
/// cycles against the reference server on loopback.
struct ReactionBench {
    let cycles: Int
    var log = false

    func run() async throws {
        let server = RealtimeServer(RealtimeServer.Configuration(tokens: ["bench"]))
        try await server.withRunning { port in
            let transport = ClosingTimesTransport(NIOWebSocketTransport())
            let lifecycle = ManualLifecycleSource()
            let start = ContinuousClock.now
            let settings = try AppSettings.Builder().serverURL("ws://127.0.0.1:\(port)/").token("bench").noHeartbeat()
                .logger(log ? SessionLogger(minimumLevel: .debug) { record in
                    FileHandle.standardError.write(Data("[\((ContinuousClock.now - start).micros) µs] \(record)\n".utf8))
                } : .silent)
                .build()
            let session = Session(settings: settings, transport: transport, lifecycle: lifecycle)
            var toClose: [Duration] = []
            var toConnected: [Duration] = []
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await session.run() }
                var updates = session.statusUpdates.makeAsyncIterator()
                while let status = await updates.next(), status != .connected {}
                for _ in 0..<cycles {
                    let closed = transport.nextClose()
                    let background = ContinuousClock.now
                    await lifecycle.send(.background)
                    let closeAt = await closed.value
                    toClose.append(closeAt - background)
                    await server.waitForOpenConnections(0)
                    let foreground = ContinuousClock.now
                    await lifecycle.send(.active)
                    while let status = await updates.next(), status != .connected {}
                    toConnected.append(ContinuousClock.now - foreground)
                }
                await session.shutdown()
                group.cancelAll()
            }
            let close = Percentiles(toClose)
            let connect = Percentiles(toConnected)
            print("  background → close frame: p50 \(close.p50.micros) µs, p99 \(close.p99.micros) µs, max \(close.max.micros) µs")
            print("  foreground → connected:   p50 \(connect.p50.micros) µs, p99 \(connect.p99.micros) µs, max \(connect.max.micros) µs")
            print("reaction: cycles=\(cycles) background_to_close_p50_us=\(close.p50.micros) background_to_close_p99_us=\(close.p99.micros) "
                + "foreground_to_connected_p50_us=\(connect.p50.micros) foreground_to_connected_p99_us=\(connect.p99.micros)")
        }
    }
}

struct Percentiles {
    let p50: Duration
    let p99: Duration
    let max: Duration

    init(_ samples: [Duration]) {
        let sorted = samples.sorted()
        p50 = sorted[sorted.count / 2]
        p99 = sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
        max = sorted[sorted.count - 1]
    }
}

extension Duration {
    var micros: Int { Int(components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000) }
}

/// A transport that notes when the session starts closing a connection (the close frame is
/// written first thing).
final class ClosingTimesTransport: Transport {
    private let base: any Transport
    private let pending = Locked<AsyncStream<ContinuousClock.Instant>.Continuation?>(nil)

    init(_ base: any Transport) { self.base = base }

    /// The instant of the next close.
    func nextClose() -> Task<ContinuousClock.Instant, Never> {
        let (stream, sink) = AsyncStream<ContinuousClock.Instant>.makeStream()
        pending.withLock { $0 = sink }
        return Task {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next() ?? .now
        }
    }

    func open(url: URL, headers: [String: String]) async throws -> any TransportConnection {
        TimedConnection(try await base.open(url: url, headers: headers), onClose: { [pending] in
            let sink = pending.withLock { sink in
                defer { sink = nil }
                return sink
            }
            sink?.yield(.now)
            sink?.finish()
        })
    }
}

final class TimedConnection: TransportConnection {
    private let base: any TransportConnection
    private let onClose: @Sendable () -> Void

    init(_ base: any TransportConnection, onClose: @escaping @Sendable () -> Void) {
        self.base = base
        self.onClose = onClose
    }

    var events: AsyncStream<TransportEvent> { base.events }
    func send(_ frame: TransportFrame) async throws { try await base.send(frame) }
    func close(code: CloseCode, reason: String) async {
        onClose()
        await base.close(code: code, reason: reason)
    }
}

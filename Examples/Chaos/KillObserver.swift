import ConnectionPolicy
import Foundation
import NIOTransport
import PeerServers
import SDK

/// The server's other client in the kill mode: it publishes the messages the app must catch up
/// on, while the app lives and while it is dead, and knows what the server applied, in the
/// server's order. On Tether's server and MQTT it is a session that holds the schedule's channels
/// for the whole schedule (never killed, no faults); on the Supabase peer it sends through the
/// peer's database (`/send`, one at a time: the order of its answers is the server's order).
final class KillObserver: Sendable {
    private let session: Session?
    private let target: KillTarget
    private let port: Int
    private let channels: [String]
    private let readers: [Task<Void, Never>]
    private let applied: Locked<[String: [String]]>
    private let publisher = Locked<Task<Void, Never>?>(nil)

    private init(session: Session?, target: KillTarget, port: Int, channels: [String], readers: [Task<Void, Never>], applied: Locked<[String: [String]]>) {
        self.session = session
        self.target = target
        self.port = port
        self.channels = channels
        self.readers = readers
        self.applied = applied
    }

    static func start(target: KillTarget, port: Int, clientID: String, channels: [String]) async throws -> KillObserver {
        let applied = Locked([String: [String]]())
        guard target != .supabase else {
            return KillObserver(session: nil, target: target, port: port, channels: channels, readers: [], applied: applied)
        }
        let settings = try AppSettings.Builder()
            .serverURL("ws://127.0.0.1:\(port)\(target.path)")
            .serverProtocol(target.serverProtocol(clientID: clientID))
            .token(target.token)
            .requestTimeout(.seconds(5))
            .build()
        let session = Session(settings: settings, transport: NIOWebSocketTransport(connectTimeout: .seconds(2)))
        var readers: [Task<Void, Never>] = [Task { await session.run() }]
        for channel in channels {
            let subscription = try await session.subscribe(to: target.topic(channel))
            readers.append(Task {
                do {
                    for try await message in subscription {
                        guard let data = target.text(message.data) else { continue }
                        applied.withLock { $0[channel, default: []].append(data) }
                    }
                } catch let error as SessionError where error.code == .sessionEnded {
                    // The schedule is over.
                } catch {
                    say("chaos: the observer's subscription of \(channel) ended: \(error)")
                }
            })
        }
        return KillObserver(session: session, target: target, port: port, channels: channels, readers: readers, applied: applied)
    }

    var isPublishing: Bool { publisher.withLock { $0 != nil } }

    /// Publishes `S-<n>` to a random channel every few milliseconds until ``stopPublishing()``
    /// (on the Supabase peer more slowly: its replay brings back at most 25 messages a channel).
    func startPublishing(seed: UInt64) {
        publisher.withLock { task in
            guard task == nil else { return }
            task = Task {
                var random = SplitMix64(seed: seed ^ 0x5EED)
                let pause = target == .supabase ? (40, 60) : (3, 25)
                var number = 0
                while !Task.isCancelled {
                    number += 1
                    await publish(number, to: channels[Int(random.next() % UInt64(channels.count))])
                    try? await Task.sleep(for: .milliseconds(Int64(pause.0 + Int(random.next() % UInt64(pause.1)))))
                }
            }
        }
    }

    func stopPublishing() async {
        let task = publisher.withLock { task in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
    }

    /// Publishes the runner's `final` message to `channel`.
    func publishFinal(to channel: String) async {
        await publish(nil, to: channel)
    }

    /// Publishes `S-<number>` (`nil`: `final`) to `channel`.
    private func publish(_ number: Int?, to channel: String) async {
        let text = number.map { "S-\($0)" } ?? "final"
        guard let session else {
            let n = number ?? KillTarget.finalNumber
            if let (status, _) = try? await AdminRequest.get(port: port, path: "/send?topic=\(channel)&n=\(n)"), status == 200 {
                applied.withLock { $0[channel, default: []].append(text) }
            } else {
                say("chaos: the Supabase peer did not take message \(text) for \(channel)")
            }
            return
        }
        _ = try? await session.publish(.string(text), to: channel)
    }

    /// What the server applied on each channel, once the runner's `final` message came back on
    /// every one (nothing is published after it).
    func received() async -> [String: [String]] {
        let channels = channels
        _ = await waitUntil(.seconds(10), { self.applied.withLock { lists in channels.allSatisfy { lists[$0]?.contains("final") == true } } })
        // The app's last publishes, applied before it exited, may still be on their way here.
        var count = -1
        while count != applied.withLock({ $0.values.reduce(0) { $0 + $1.count } }) {
            count = applied.withLock { $0.values.reduce(0) { $0 + $1.count } }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return applied.withLock { $0 }
    }

    func stop() {
        publisher.withLock { $0?.cancel() }
        for reader in readers { reader.cancel() }
        if let session { Task { await session.shutdown() } }
    }
}

import ConnectionPolicy
import Foundation
import NIOTransport
import SDK

/// The server's other client in the kill mode: it holds the schedule's channels for the whole
/// schedule (never killed, no faults), so what it receives is what the server applied, in the
/// server's order; and it publishes the messages the app must catch up on, while the app lives
/// and while it is dead.
final class KillObserver: Sendable {
    private let session: Session
    private let target: KillTarget
    private let channels: [String]
    private let readers: [Task<Void, Never>]
    private let runner: Task<Void, Never>
    private let applied: Locked<[String: [String]]>
    private let publisher = Locked<Task<Void, Never>?>(nil)

    private init(session: Session, target: KillTarget, channels: [String], readers: [Task<Void, Never>], runner: Task<Void, Never>, applied: Locked<[String: [String]]>) {
        self.session = session
        self.target = target
        self.channels = channels
        self.readers = readers
        self.runner = runner
        self.applied = applied
    }

    static func start(target: KillTarget, port: Int, clientID: String, channels: [String]) async throws -> KillObserver {
        let settings = try AppSettings.Builder()
            .serverURL("ws://127.0.0.1:\(port)/")
            .serverProtocol(target.serverProtocol(clientID: clientID))
            .token(target.token)
            .requestTimeout(.seconds(5))
            .build()
        let session = Session(settings: settings, transport: NIOWebSocketTransport(connectTimeout: .seconds(2)))
        let runner = Task { await session.run() }
        let applied = Locked([String: [String]]())
        var readers: [Task<Void, Never>] = []
        for channel in channels {
            let subscription = try await session.subscribe(to: channel)
            readers.append(Task {
                do {
                    for try await message in subscription {
                        let data = KillTarget.text(message.data)
                        applied.withLock { $0[channel, default: []].append(data) }
                    }
                } catch {
                    say("chaos: the observer's subscription of \(channel) ended: \(error)")
                }
            })
        }
        return KillObserver(session: session, target: target, channels: channels, readers: readers, runner: runner, applied: applied)
    }

    var isPublishing: Bool { publisher.withLock { $0 != nil } }

    /// Publishes `S-<n>` to a random channel every few milliseconds until ``stopPublishing()``.
    func startPublishing(seed: UInt64) {
        let session = session
        let target = target
        let names = channels
        publisher.withLock { task in
            guard task == nil else { return }
            task = Task {
                var random = SplitMix64(seed: seed ^ 0x5EED)
                var number = 0
                while !Task.isCancelled {
                    number += 1
                    _ = try? await session.publish(target.data("S-\(number)"), to: names[Int(random.next() % UInt64(names.count))])
                    try? await Task.sleep(for: .milliseconds(Int64(3 + random.next() % 25)))
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

    func publish(_ text: String, to channel: String) async {
        _ = try? await session.publish(target.data(text), to: channel)
    }

    /// What the observer received on each channel, once the runner's `final` message came back
    /// on every one (nothing is published after it).
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
        let session = session
        Task { await session.shutdown() }
        _ = runner
    }
}

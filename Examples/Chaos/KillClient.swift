import ConnectionPolicy
import Foundation
import NIOTransport
import SDK

/// One launch of the app that the kill mode SIGKILLs (`chaos --kill-client …`): a session on a
/// file store that subscribes to the schedule's channels, publishes, and reads, telling the runner
/// every step as one line on stdout (one `write`: a kill never leaves half a line).
///
///     open <status> loss=<bytes>        the store opened (or not) at launch
///     earlier <data> <state>            a publish of an earlier launch, as the relaunch lists it
///     outcome <data> <state>            one such publish's outcome, as it comes
///     writing append <size> | replace   a write to the store began (the file's size before it)
///     written                           the write returned (fsync)
///     durable <data>                    the store's write holding this publish returned
///     start|acked|failed <data>         a publish of this launch
///     recv <channel> <r|n> <data>       a message handed to the app (r: flagged as a redelivery)
///     ready / done                      subscribed to every channel / the final launch is done
struct KillClient {
    let target: KillTarget
    /// The broker's key to the app's session (MQTT): the same for every launch.
    let clientID: String
    let port: Int
    let directory: URL
    let seed: UInt64
    let launch: Int
    let channels: [String]
    /// The last launch: publishes nothing, waits until every publish of the earlier launches has
    /// ended and the runner's `final` message arrived on every channel, then exits.
    let isFinal: Bool

    func run() async {
        let store = ReportingStore(directory: directory)
        let settings: AppSettings
        do {
            settings = try AppSettings.Builder()
                .serverURL("ws://127.0.0.1:\(port)\(target.path)")
                .serverProtocol(target.serverProtocol(clientID: clientID))
                .token(target.token)
                .store(store)
                .reconnectBackoff(Backoff(initial: .milliseconds(20), multiplier: 2, maximum: .milliseconds(200), jitter: 0.2))
                .connectTimeout(.seconds(2))
                .requestTimeout(.seconds(5))
                .outboxTimeout(.seconds(90))
                .build()
        } catch {
            say("error settings \(error)")
            exit(2)
        }
        let session = Session(settings: settings, transport: NIOWebSocketTransport(connectTimeout: .seconds(2)))
        let runner = Task { await session.run() }
        let outcomes = session.earlierPublishOutcomes
        let watcher = Task {
            for await publish in outcomes { say("outcome \(Self.publishText(publish.data)) \(Self.state(publish.state))") }
        }
        // The first launch subscribes once connected: each `subscribe` then returns with the
        // server's answer, so `ready` means the server holds the subscriptions (the runner
        // publishes from then on). A relaunch subscribes again at once, as an app does at launch.
        let connectedBy = ContinuousClock.now + .seconds(10)
        while launch == 1, session.status != .connected, ContinuousClock.now < connectedBy { try? await Task.sleep(for: .milliseconds(5)) }
        var finals = Set<String>()
        let finalsSeen = Locked(Set<String>())
        var readers: [Task<Void, Never>] = []
        for channel in channels {
            do {
                let subscription = try await session.subscribe(to: target.topic(channel))
                if channel == channels.first {
                    let loss = session.storeLoss.map { "\($0.bytes)" } ?? "0"
                    say("open \(Self.status(session.storeStatus)) loss=\(loss)")
                    for publish in await session.earlierPublishes { say("earlier \(Self.publishText(publish.data)) \(Self.state(publish.state))") }
                }
                readers.append(Task {
                    do {
                        for try await message in subscription {
                            guard let data = target.text(message.data) else { continue }
                            say("recv \(channel) \(message.isRedelivery ? "r" : "n") \(data)")
                            if data == "final" { finalsSeen.withLock { _ = $0.insert(channel) } }
                        }
                    } catch let error as SessionError where error.code == .sessionEnded {
                        // The last launch shuts down.
                    } catch {
                        say("error subscription \(channel) \(error)")
                    }
                })
                finals.insert(channel)
            } catch {
                say("error subscribe \(channel) \(error)")
            }
        }
        while session.status != .connected, ContinuousClock.now < connectedBy { try? await Task.sleep(for: .milliseconds(5)) }
        say("ready")
        if isFinal {
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                let waiting = await session.earlierPublishes.contains { $0.state == .waiting }
                if !waiting && finalsSeen.withLock({ $0 }) == finals { break }
                try? await Task.sleep(for: .milliseconds(20))
            }
            for publish in await session.earlierPublishes { say("ended \(Self.publishText(publish.data)) \(Self.state(publish.state))") }
            say("done")
            await session.shutdown()
            exit(0)
        }
        var random = SplitMix64(seed: seed &+ UInt64(launch) &* 7919)
        var number = 0
        while target.appPublishes {
            number += 1
            let data = "P-\(launch)-\(number)"
            let channel = channels[Int(random.next() % UInt64(channels.count))]
            say("start \(data)")
            Task {
                do {
                    _ = try await session.publish(.string(data), to: channel)
                    say("acked \(data)")
                } catch {
                    say("failed \(data) \(error)")
                }
            }
            try? await Task.sleep(for: .milliseconds(Int64(2 + random.next() % 20)))
        }
        // Nothing of its own to publish: it reads until it is killed.
        await runner.value
        _ = (watcher, readers)
    }

    /// The text of one of the app's publishes (its data is that string).
    static func publishText(_ data: JSONValue) -> String {
        if case .string(let text) = data { return text }
        return "\(data)"
    }

    static func status(_ status: SessionStoreStatus) -> String {
        switch status {
        case .durable: "durable"
        case .off: "off"
        case .inMemory(let error): "inMemory(\(error.code))"
        }
    }

    static func state(_ state: EarlierPublish.State) -> String {
        switch state {
        case .waiting: "waiting"
        case .mayHaveBeenApplied: "mayHaveBeenApplied"
        case .acknowledged: "acknowledged"
        case .failed(let error): "failed(\(error.code))"
        }
    }
}

/// The file store, telling the runner which publishes each write holds once it returned: the
/// app has been told its publish is kept (what the runner holds the relaunch to).
final class ReportingStore: SessionStore {
    let file: FileSessionStore
    let path: String

    init(directory: URL) {
        file = FileSessionStore(directory: directory)
        path = directory.appendingPathComponent("session.tether").path
    }

    /// The file's size before a write: what a torn append may cut back to, and no further.
    private var size: UInt64 { ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.uint64Value ?? 0 }

    func load() throws(SessionStoreError) -> StoredRecords { try file.load() }
    func append(_ records: [Data]) throws(SessionStoreError) {
        say("writing append \(size)")
        try file.append(records)
        say("written")
        report(records)
    }
    func replace(with records: [Data]) throws(SessionStoreError) {
        say("writing replace")
        try file.replace(with: records)
        say("written")
        report(records)
    }
    func close() { file.close() }

    private func report(_ records: [Data]) {
        for record in records {
            let text = String(decoding: record, as: UTF8.self)
            // A publish record holds its data's JSON text: the runner's publishes are "P-<launch>-<n>".
            guard text.hasPrefix("{\"publish\""), let start = text.range(of: "P-") else { continue }
            let rest = text[start.lowerBound...]
            let data = rest.prefix { $0 == "P" || $0 == "-" || $0.isNumber }
            say("durable \(data)")
        }
    }
}

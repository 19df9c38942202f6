import Foundation
import NIOTransport
import ReferenceServer
import SDK

/// The keyboard-driven demo: one session against the in-process server; each key is a host
/// call or a lifecycle change, and every status change is printed as it happens.
struct Interactive {
    let server: RealtimeServer
    let port: Int
    let narrator: Narrator
    let auto: Bool

    static let help = """
        keys: b = background   f = foreground   p = ping   c = connect   d = disconnect
              s TEXT = publish TEXT on "room"   x = server drops every connection
              r = server refuses connections (toggle)   t = status   q = quit
        """

    func run() async throws {
        let settings = try AppSettings.Builder()
            .serverURL("ws://127.0.0.1:\(port)/")
            .token("demo-token")
            .autoEstablishSocketConnection(auto)
            .backgroundTimeout(.seconds(10))
            .build()
        let lifecycle = ManualLifecycleSource()
        let session = Session(settings: settings, transport: NIOWebSocketTransport(), lifecycle: lifecycle)
        let watcher = StatusWatcher(narrator: narrator)
        narrator.say("\(auto ? "Auto" : "Manual") mode (watchdog 10 s in Manual); subscribed to \"room\"")
        print(Self.help)
        let lines = Self.standardInputLines()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await watcher.follow(session) }
            group.addTask { await session.run() }
            let room = try await session.subscribe(to: "room")
            group.addTask {
                for try await message in room { narrator.say("  message room#\(message.sequence.map(String.init) ?? "-"): \(message.data)") }
            }
            for await line in lines {
                let command = line.trimmingCharacters(in: .whitespaces)
                switch command.first {
                case "b": await lifecycle.send(.background)
                case "f": await lifecycle.send(.active)
                case "c":
                    do { try await session.connect() } catch { narrator.say("connect: \(error)") }
                case "d": await session.disconnect()
                case "p":
                    do {
                        try await session.ping()
                        narrator.say("pong")
                    } catch { narrator.say("ping: \(error)") }
                case "s":
                    let text = String(command.dropFirst()).trimmingCharacters(in: .whitespaces)
                    do {
                        let receipt = try await session.publish(.string(text), to: "room")
                        narrator.say("published room: \(receipt)")
                    } catch { narrator.say("publish: \(error)") }
                case "x": server.dropAllConnections()
                case "r":
                    server.updateFaults { $0.refuseConnections.toggle() }
                    narrator.say("server refuses connections: \(server.faults.refuseConnections)")
                case "t": narrator.say("status: \(session.status); timers: \(session.armedTimers)")
                case "q": break
                default: print(Self.help)
                }
                if command.first == "q" { break }
            }
            await session.shutdown()
            group.cancelAll()
        }
    }

    /// Lines from standard input, read on a thread of their own so no task blocks on `readLine`.
    static func standardInputLines() -> AsyncStream<String> {
        let (lines, sink) = AsyncStream<String>.makeStream()
        let thread = Thread {
            while let line = readLine() { sink.yield(line) }
            sink.finish()
        }
        thread.start()
        return lines
    }
}

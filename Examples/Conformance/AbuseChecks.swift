import Foundation
import SDK

/// Bounded abuse: what one client can cost a server must have a limit, and the server must go
/// on serving others.
extension ConformanceSuite {
    static let abuseChecks: [Check] = [
        Check(name: "a reader that stops reading is cut off: bounded memory, nothing acknowledged lost, a fresh client served") { target in
            try await stalledReader(target)
        },
        Check(name: "unauthenticated sockets are all closed within the authentication timeout, and a fresh client is served meanwhile") { target in
            try await idleUnauthenticated(target)
        },
        Check(name: "a slow upgrade (a byte at a time) is cut off within the upgrade timeout") { target in
            let socket = try await RawWebSocket.connect(host: target.host, port: target.port)
            let request = RawWebSocket.upgradeRequest(host: target.host, port: target.port)
            // Spread the request over twice the timeout: a server that waits for it fails.
            let pause = target.upgradeTimeout * 2 / request.count
            let start = ContinuousClock.now
            var cutOff = false
            for byte in request.dropLast() {
                if (try? await socket.send([byte])) == nil {
                    cutOff = true
                    break
                }
                if await socket.waitUntilEnded(within: pause) {
                    cutOff = true
                    break
                }
            }
            let elapsed = ContinuousClock.now - start
            await socket.close()
            try require(cutOff, "the server still held the connection after \(elapsed) of a slow upgrade")
            try require(elapsed < target.upgradeTimeout + .seconds(3), "cut off only after \(elapsed)")
        },
        Check(name: "an authenticated connection that stays silent past the idle timeout is closed with 4000") { target in
            guard let idle = target.idleTimeout else { return }
            // Timed from before the connection opens: whatever the server counts idleness from
            // (the open, the `auth`), it came later — a client that reads the `ok` late on a busy
            // machine must not make a correct server look early.
            let start = ContinuousClock.now
            let client = try await ProtocolClient.authenticated(target)
            try await client.expectClose(4000, within: idle * 2 + .seconds(3))
            let elapsed = ContinuousClock.now - start
            try require(elapsed >= idle - .milliseconds(50), "closed after \(elapsed), before the idle timeout \(idle)")
            await client.close()
        },
    ]

    /// A subscriber stops reading while a publisher floods its channel with far more than the
    /// server retains. The server must cut the stalled reader off (its memory bounded by the
    /// retention, not by the flood), keep every acknowledged message within its retention
    /// available by sequence, and keep serving.
    static func stalledReader(_ target: Target) async throws {
        let channel = "conformance-stall-\(UInt32.random(in: 0...UInt32.max))"
        let stalled = try await ProtocolClient.authenticated(target, receiveBuffer: 4096)
        try await stalled.send(#"{"type":"subscribe","id":2,"channel":"\#(channel)"}"#)
        _ = try await stalled.next()
        try await stalled.socket.setReading(false)
        let before = rss(of: target.pid)
        var peak = before ?? 0
        let publisher = try await ProtocolClient.authenticated(target)
        let payload = String(repeating: "p", count: 32 << 10)
        let count = target.floodMessages
        var latest: UInt64 = 0
        for n in 1...count {
            // The stalled reader still sends (a ping now and then), so an idle limit does not
            // end it: only its not reading may.
            if n % 10 == 0 { try? await stalled.send(#"{"type":"ping","id":\#(n)}"#) }
            try await publisher.send(#"{"type":"publish","id":\#(n + 1),"channel":"\#(channel)","data":"\#(payload)"}"#)
            let ack = try await publisher.next(within: .seconds(10))
            try require(ack["type"] == "ok", "publish \(n) answered \(ack.description.prefix(80))")
            latest = ack["seq"]?.unsignedIntegerValue ?? 0
            if n % 200 == 0, let now = rss(of: target.pid) { peak = max(peak, now) }
        }
        // The stalled reader, reading again, finds its connection ended.
        try? await stalled.socket.setReading(true)
        let ended = await stalled.socket.waitUntilEnded(within: .seconds(15))
        await stalled.close()
        try require(ended, "the stalled reader's connection was not closed")
        // A fresh client is served, and catches up by sequence.
        let fresh = try await ProtocolClient.authenticated(target)
        let back = min(latest, 10)
        try await fresh.send(#"{"type":"subscribe","id":2,"channel":"\#(channel)","since":\#(latest - back)}"#)
        let ok = try await fresh.next()
        try require(ok["type"] == "ok" && ok["seq"]?.unsignedIntegerValue == latest && (ok["gap"] ?? false) == false, "catch-up subscribe answered \(ok)")
        for n in (latest - back + 1)...latest {
            let message = try await fresh.next()
            try require(message["seq"]?.unsignedIntegerValue == n, "catch-up message \(n) arrived as seq \(message["seq"]?.description ?? "none")")
        }
        await fresh.close()
        await publisher.close()
        if let before {
            let growth = peak - before
            let published = count * payload.utf8.count
            print("  memory: RSS \(before >> 20) MiB before, \(peak >> 20) MiB at most while \(published >> 20) MiB were published; after: \((rss(of: target.pid) ?? 0) >> 20) MiB")
            try require(growth < published / 2, "the server's memory grew by \(growth >> 20) MiB while \(published >> 20) MiB went to a reader that did not read")
        }
    }

    static func idleUnauthenticated(_ target: Target) async throws {
        var sockets: [RawWebSocket] = []
        let batch = 100
        var opened = 0
        while opened < target.idleSockets {
            let size = min(batch, target.idleSockets - opened)
            let next = try await withThrowingTaskGroup(of: RawWebSocket.self) { group in
                for _ in 0..<size { group.addTask { try await RawWebSocket.upgraded(host: target.host, port: target.port) } }
                var made: [RawWebSocket] = []
                for try await socket in group { made.append(socket) }
                return made
            }
            sockets += next
            opened += size
        }
        let start = ContinuousClock.now
        let fresh = try await ProtocolClient.authenticated(target)
        try await fresh.send(#"{"type":"ping","id":2}"#)
        try require(try await fresh.next()["type"] == "pong", "a fresh client was not served beside \(sockets.count) idle sockets")
        await fresh.close()
        let deadline = start + target.authenticationTimeout + .seconds(5)
        var stillOpen = 0
        for socket in sockets {
            if await !socket.waitUntilEnded(within: max(deadline - .now, .milliseconds(1))) { stillOpen += 1 }
            await socket.close()
        }
        try require(stillOpen == 0, "\(stillOpen) of \(sockets.count) unauthenticated sockets were still open past the authentication timeout")
    }

    /// The resident memory of a process, from /proc (Linux); nil elsewhere or without a pid.
    static func rss(of pid: Int32?) -> Int? {
        guard let pid, let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return nil }
        let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first
        return kilobytes.map { $0 * 1024 }
    }
}

import Foundation
import ReferenceChatClient
import ReferenceServer
import SDK
import SDKTesting

// swift run controller-example
// Tether's policies in front of a client the app already has: `ReferenceChatClient`, a bare
// swift-nio WebSocket client (no Session), driven by a ConnectionController against the
// embedded reference server on loopback, through the Auto and Manual tables of "The two modes". Each line
// is a check; the last says how many passed. Ends within 60 s whatever happens.

final class Checks: Sendable {
    private let failed = Locked(0)
    private let passed = Locked(0)

    func check(_ condition: Bool, _ text: String) {
        (condition ? passed : failed).withLock { $0 += 1 }
        print("\(condition ? "✓" : "✗") \(text)")
    }

    var failures: Int { failed.withLock { $0 } }
    var successes: Int { passed.withLock { $0 } }
}

let backoff = Backoff(initial: .milliseconds(100), multiplier: 2, maximum: .seconds(1), jitter: 0.2)

/// The next message of the client is the one the server publishes to `room` now.
func roundTrip(_ server: RealtimeServer, _ messages: inout AsyncStream<ChannelMessage>.Iterator, _ text: String) async throws -> Bool {
    _ = try server.publish(.string(text), to: "room")
    return await messages.next()?.data == .string(text)
}

/// "The two modes", Auto mode.
func autoTable(_ server: RealtimeServer, _ url: URL, _ checks: Checks, _ backoff: Backoff) async throws {
    print("== Auto mode: connected in the foreground, disconnected at once in the background")
    let client = ReferenceChatClient(url: url, token: "example-token")
    let lifecycle = ManualLifecycleSource(initialState: .active)
    let auto = ConnectionController(connection: client, policy: AutoPolicy(.init(backoff: backoff)), lifecycle: lifecycle, logger: .silent)
    try await withRunningController(auto) { status in
        var messages = client.messages.makeAsyncIterator()
        try await client.join("room")
        try await status.waitFor(.connected)
        checks.check(true, "launch: connected by itself")
        checks.check(try await roundTrip(server, &messages, "hello"), "a message arrives in the room the client joined")
        await lifecycle.send(.background)
        checks.check(auto.status == .disconnected(.appBackgrounded), "background: disconnected at once (\(auto.status))")
        await server.waitForOpenConnections(0)
        checks.check(auto.armedTimers.isEmpty, "nothing runs in the background")
        await lifecycle.send(.active)
        try await status.waitFor(.connected)
        checks.check(true, "foreground: reconnected")
        checks.check(try await roundTrip(server, &messages, "again"), "the client rejoined its room: messages arrive again")
    }
    checks.check(await client.mostOpenSockets == 1, "never two sockets at once")
}

/// "The two modes", Manual mode (a 2 s window instead of 30 s).
func manualTable(_ server: RealtimeServer, _ url: URL, _ checks: Checks, _ backoff: Backoff) async throws {
    print("== Manual mode: the app connects; in the background a watchdog closes unless pinged")
    let client = ReferenceChatClient(url: url, token: "example-token")
    let lifecycle = ManualLifecycleSource(initialState: .active)
    let accepted = server.acceptedConnectionCount
    let manual = ConnectionController(
        connection: client, policy: ManualPolicy(.init(backgroundTimeout: .seconds(2), backoff: backoff)), lifecycle: lifecycle,
        ping: { try await client.ping() }, logger: .silent
    )
    try await withRunningController(manual) { status in
        checks.check(server.acceptedConnectionCount == accepted && manual.status == .disconnected(.notStarted), "launch: nothing connects until connect()")
        try await manual.connect()
        checks.check(manual.status == .connected, "connect() returns once connected")
        await lifecycle.send(.background)
        try await manual.ping()
        checks.check(manual.status == .connected, "background: still connected; the server answers ping(), which buys a full window")
        try await status.waitFor(.disconnected(.watchdogExpired))
        checks.check(true, "no ping for 2 s: the watchdog disconnected")
        await server.waitForOpenConnections(0)
        await lifecycle.send(.active)
        checks.check(manual.status == .disconnected(.watchdogExpired), "foreground: Manual mode does not reconnect by itself")
        try await manual.connect()
        checks.check(manual.status == .connected, "connect() connects again")
    }
}

Task {
    try await Task.sleep(for: .seconds(60))
    print("controller-example: did not finish within 60 s")
    exit(1)
}

let checks = Checks()
do {
    let server = RealtimeServer(.init(tokens: ["example-token"]))
    try await server.withRunning { port in
        let url = URL(string: "ws://127.0.0.1:\(port)/")!
        try await autoTable(server, url, checks, backoff)
        try await manualTable(server, url, checks, backoff)
    }
} catch {
    checks.check(false, "the example ran to the end (\(error))")
}
print("controller-example: \(checks.successes) checks passed, \(checks.failures) failed")
exit(checks.failures == 0 ? 0 : 1)

import Foundation
import SDK

/// Every MUST of `docs/PROTOCOL.md`, and bounded abuse, checked against a running server from
/// the outside (raw sockets; nothing of the server is imported). Run it with
/// `swift run conformance --port P --token T` against any server of the protocol; the
/// reference server runs it in CI.
public struct ConformanceSuite: Sendable {
    /// The server under test, and what it was started with.
    public struct Target: Sendable {
        public var host: String
        public var port: Int
        /// A token the server accepts (the suite also tries one it must reject).
        public var token: String
        /// The server's authentication timeout (the suite waits a little longer for its closes).
        public var authenticationTimeout: Duration
        /// The server's upgrade timeout.
        public var upgradeTimeout: Duration
        /// The server's idle timeout, if the suite should check it (it waits that long).
        public var idleTimeout: Duration?
        /// The server's process, to sample its memory (RSS, from /proc) during the abuse checks.
        public var pid: Int32?
        /// Unauthenticated sockets opened at once by the idle-sockets check.
        public var idleSockets: Int
        /// Messages of 32 KiB the stalled-reader check publishes (2,000: 64 MiB). It must be well
        /// above the server's retention and queue bound for the memory check to mean anything.
        public var floodMessages: Int

        public init(
            host: String = "127.0.0.1", port: Int, token: String, authenticationTimeout: Duration = .seconds(10),
            upgradeTimeout: Duration = .seconds(10), idleTimeout: Duration? = nil, pid: Int32? = nil, idleSockets: Int = 2_000,
            floodMessages: Int = 2_000
        ) {
            self.floodMessages = floodMessages
            self.host = host
            self.port = port
            self.token = token
            self.authenticationTimeout = authenticationTimeout
            self.upgradeTimeout = upgradeTimeout
            self.idleTimeout = idleTimeout
            self.pid = pid
            self.idleSockets = idleSockets
        }
    }

    /// One check's outcome.
    public struct Outcome: Sendable {
        public let name: String
        /// `nil` when the check passed.
        public let failure: String?
        public let duration: Duration
    }

    public struct Check: Sendable {
        public let name: String
        let run: @Sendable (Target) async throws -> Void
    }

    public let target: Target

    public init(_ target: Target) { self.target = target }

    /// Runs every check, one after another; each gets fresh connections.
    public func run(only filter: String? = nil, report: @Sendable (Outcome) -> Void = { _ in }) async -> [Outcome] {
        var outcomes: [Outcome] = []
        for check in Self.checks where filter.map({ check.name.contains($0) }) ?? true {
            let start = ContinuousClock.now
            var failure: String?
            do {
                try await check.run(target)
            } catch {
                failure = String(describing: error)
            }
            let outcome = Outcome(name: check.name, failure: failure, duration: .now - start)
            report(outcome)
            outcomes.append(outcome)
        }
        return outcomes
    }

    static let checks: [Check] = protocolChecks + handshakeChecks + frameChecks + abuseChecks

    /// The name of every check, in the order they run.
    public static var checkNames: [String] { checks.map(\.name) }

    /// Runs the check named `name`; nil when it passed, else what went wrong.
    public func run(check name: String) async -> String? {
        guard let check = Self.checks.first(where: { $0.name == name }) else { return "no check named '\(name)'" }
        do {
            try await check.run(target)
            return nil
        } catch {
            return String(describing: error)
        }
    }
}

/// A check's failure: what the server did against what the protocol says.
struct Violation: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw Violation(message()) }
}

/// A connection speaking the protocol in JSON text, for the checks.
struct ProtocolClient {
    let socket: RawWebSocket
    let target: ConformanceSuite.Target

    static func open(_ target: ConformanceSuite.Target, receiveBuffer: Int? = nil) async throws -> ProtocolClient {
        ProtocolClient(socket: try await RawWebSocket.upgraded(host: target.host, port: target.port, receiveBuffer: receiveBuffer), target: target)
    }

    /// Opens a connection and authenticates with the target's token.
    static func authenticated(_ target: ConformanceSuite.Target, receiveBuffer: Int? = nil) async throws -> ProtocolClient {
        let client = try await open(target, receiveBuffer: receiveBuffer)
        try await client.send(#"{"type":"auth","id":1,"token":"\#(target.token)"}"#)
        let reply = try await client.next()
        try require(reply["type"]?.stringValue == "ok" && reply["id"]?.unsignedIntegerValue == 1, "auth with a valid token answered \(reply)")
        return client
    }

    func send(_ text: String) async throws { try await socket.sendText(text) }

    /// The next message, as JSON.
    func next(within limit: Duration = .seconds(5)) async throws -> JSONValue {
        guard let text = try await socket.nextText(within: limit) else {
            let close = try? await socket.closeFrame(within: .milliseconds(100))
            throw Violation("the connection ended (close \(close?.closeCode.map(String.init) ?? "none")) where a message was due")
        }
        return try Self.parse(text)
    }

    /// The next message's raw text.
    func nextText(within limit: Duration = .seconds(5)) async throws -> String {
        guard let text = try await socket.nextText(within: limit) else { throw Violation("the connection ended where a message was due") }
        return text
    }

    static func parse(_ text: String) throws -> JSONValue {
        // The codec's parser, through a frame of a type it knows: a message's data is any JSON.
        let frame = TransportFrame.text(#"{"type":"message","channel":"x","seq":1,"data":"# + text + "}")
        guard case .message(let message) = try JSONWireCodec(maxFrameBytes: 1 << 21).decode(frame) else {
            throw Violation("not JSON: \(text.prefix(80))")
        }
        return message.data
    }

    /// Expects the server's close frame with `code` (the TCP connection may end right after).
    func expectClose(_ code: UInt16, within limit: Duration = .seconds(5)) async throws {
        let frame = try await socket.closeFrame(within: limit)
        try require(frame?.closeCode == code, "expected close \(code), got \(frame.map { "close \($0.closeCode.map(String.init) ?? "without code")" } ?? "the connection ending without a close frame")")
    }

    func close() async { await socket.close() }
}

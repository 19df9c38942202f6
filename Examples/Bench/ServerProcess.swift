import Foundation
import PeerServers

/// A helper process the benchmarks start beside themselves — the reference server
/// (`realtime-server`) or the delay proxy (`bench proxy`) — so that the measured process runs
/// the client alone. Both executables are found beside this one (`swift build -c release`
/// builds them together); stopped by pid when the benchmark ends.
final class ServerProcess: Sendable {
    let port: Int
    private let process: Process?

    private init(port: Int, process: Process?) {
        self.port = port
        self.process = process
    }

    /// A server already running on `port` (started by hand), not stopped by the benchmark.
    static func attached(port: Int) -> ServerProcess { ServerProcess(port: port, process: nil) }

    /// The executable `name` beside this one, if it was built.
    static func sibling(_ name: String) -> String? {
        let path = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name).path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    /// Starts `path` with `arguments` plus `--port-file F`, and returns once it wrote its port.
    static func start(_ path: String, _ arguments: [String]) async throws -> ServerProcess {
        let portFile = FileManager.default.temporaryDirectory.appendingPathComponent("bench-port-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments + ["--port-file", portFile]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer { try? FileManager.default.removeItem(atPath: portFile) }
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline, process.isRunning {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                return ServerProcess(port: port, process: process)
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        process.terminate()
        throw BenchError("\(path) did not report its port within 20 s")
    }

    func stop() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }

    /// GET `path` on the process's admin endpoint; the body.
    func admin(_ path: String) async throws -> String {
        let (status, body) = try await AdminRequest.get(port: port, path: path)
        guard status == 200 else { throw BenchError("\(path): \(body)") }
        return body
    }

    /// The process's CPU time so far, every thread's, to the nanosecond (Linux's
    /// `/proc/PID/task/*/schedstat`; `nil` elsewhere, or for a server started by hand).
    var cpuTime: Duration? {
        guard let process, let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/task") else { return nil }
        var nanoseconds: Int64 = 0
        for thread in threads {
            guard let text = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/task/\(thread)/schedstat", encoding: .utf8),
                let first = text.split(separator: " ").first, let value = Int64(first)
            else { continue }
            nanoseconds += value
        }
        return .nanoseconds(nanoseconds)
    }

    /// Returns once the server has `count` WebSocket connections open (asks every 5 ms).
    func waitForOpenConnections(_ count: Int) async throws {
        while !(try await admin("/admin/status")).hasPrefix("connections=\(count) ") {
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

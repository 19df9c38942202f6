import Foundation
import SDK

/// A real, unmodified third-party server the protocol adapters are tested against
/// (strawberry-graphql, python-socketio; and a scripted Phoenix peer, as no Phoenix server can be
/// installed here): provisioned once per test run into a virtual
/// environment under `.build/peers-venv` from `Apps/requirements.txt` (pinned versions, from
/// PyPI), started under uvicorn on a free loopback port (127.0.0.1 only), stopped by its process
/// id. When it cannot be provisioned the test fails with what is missing — never a silent skip.
/// It runs through `Apps/tethered.py`, so it also ends when this process ends without stopping
/// it (a crash, a kill from outside, `exit()` on a hang).
public final class PeerServer: Sendable {
    public enum App: String, Sendable {
        case graphQL = "graphql_app:app"
        case socketIO = "socketio_app:app"
        /// A scripted Phoenix Channels peer playing back a real Phoenix 1.7.24 server's frames.
        case phoenix = "phoenix_app:app"
        /// A scripted Supabase Realtime peer playing back a real supabase/realtime v2.52.1 server's frames.
        case supabase = "supabase_app:app"
    }

    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) { self.description = description }
    }

    static let apps = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Apps")
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let venv = packageRoot.appendingPathComponent(".build/peers-venv")

    /// The venv's python, provisioned once per process. pip runs for tens of seconds: it is
    /// awaited (``ChildProcess``), never waited for on one of the concurrency pool's few threads,
    /// which would starve every other test running meanwhile.
    static let provisioning = Provisioning()

    final class Provisioning: Sendable {
        private let result = Locked<Result<URL, Unavailable>?>(nil)
        private let done = OneShot()

        init() {
            let result = self.result, done = self.done
            Task.detached {
                let outcome = await PeerServer.provision()
                result.withLock { $0 = outcome }
                done.fire()
            }
        }

        func python() async throws -> URL {
            await done.wait()
            guard let outcome = result.withLock({ $0 }) else { throw Unavailable(description: "provisioning was interrupted") }
            return try outcome.get()
        }
    }

    public let port: Int
    private let child: ChildProcess

    private init(child: ChildProcess, port: Int) {
        self.child = child
        self.port = port
    }

    /// Starts `app` on a free port (or on `port`, to restart a server where it was); returns
    /// once it listens.
    public static func start(_ app: App, port: Int = 0, environment: [String: String] = [:]) async throws -> PeerServer {
        let python = try await provisioning.python()
        let child = try ChildProcess(
            python.path, [apps.appendingPathComponent("tethered.py").path, "-m", "uvicorn", app.rawValue, "--host", "127.0.0.1", "--port", String(port), "--app-dir", apps.path, "--log-level", "info"],
            environment: environment
        )
        let server: PeerServer? = try await withThrowingTaskGroup(of: PeerServer?.self) { group in
            group.addTask {
                var log: [String] = []
                for await line in child.lines {
                    log.append(line)
                    if let range = line.range(of: "Uvicorn running on http://127.0.0.1:"),
                       let port = Int(line[range.upperBound...].prefix { $0.isNumber }) {
                        return PeerServer(child: child, port: port)
                    }
                }
                throw Unavailable(description: "\(app.rawValue) exited before it listened:\n" + log.suffix(20).joined(separator: "\n"))
            }
            group.addTask {
                try await Task.sleep(for: .seconds(30))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let server else {
            child.send(SIGKILL)
            await child.exited()
            throw Unavailable(description: "\(app.rawValue) did not report its port within 30 s")
        }
        // Keep draining its log, so it never blocks on a full pipe.
        Task.detached { for await _ in child.lines {} }
        return server
    }

    /// Stops the server by its process id (SIGTERM, then SIGKILL after 5 s), and waits for it
    /// to exit without blocking a thread.
    public func stop() async {
        guard !child.hasExited else { return }
        child.send(SIGCONT)
        child.send(SIGTERM)
        if await !child.exited(within: .seconds(5)) {
            child.send(SIGKILL)
            await child.exited()
        }
    }

    /// Sends `signal` to the server's process (SIGKILL, SIGSTOP, SIGCONT: the process-level
    /// faults of the integration tests and `chaos --protocol`).
    public func send(_ signal: Int32) {
        child.send(signal)
    }

    /// Waits for the process to exit (after a SIGKILL).
    public func exited() async {
        _ = await child.exited()
    }

    /// Waits up to `limit` for the process to exit; true when it has.
    public func exited(within limit: Duration) async -> Bool {
        await child.exited(within: limit)
    }

    /// Lets go of the server as this process ending would (it then ends itself).
    public func releaseTether() {
        child.releaseTether()
    }

    /// SIGKILLs every server (every child) this process started and has not seen exit, at once:
    /// call it right before `exit()` when there is no time to stop them in order.
    public static func killAll() {
        ChildProcess.killAll()
    }

    /// Runs `body` with `app` running; stops it afterwards, also when `body` throws.
    public static func withRunning<Result: Sendable>(
        _ app: App, environment: [String: String] = [:], _ body: (PeerServer) async throws -> Result
    ) async throws -> Result {
        let server = try await start(app, environment: environment)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    private static func provision() async -> Result<URL, Unavailable> {
        let python = venv.appendingPathComponent("bin/python")
        let requirements = apps.appendingPathComponent("requirements.txt")
        let marker = venv.appendingPathComponent(".provisioned")
        let wanted = (try? String(contentsOf: requirements, encoding: .utf8)) ?? ""
        if (try? String(contentsOf: marker, encoding: .utf8)) == wanted, FileManager.default.fileExists(atPath: python.path) {
            return .success(python)
        }
        if let failure = await ChildProcess.run("/usr/bin/env", ["python3", "-m", "venv", "--clear", venv.path]) {
            return .failure(Unavailable(description: "python3 with venv is needed to run the real peer servers (apt-get install python3-venv): \(failure)"))
        }
        if let failure = await ChildProcess.run(python.path, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", requirements.path]) {
            return .failure(Unavailable(description: "pip could not install the peer servers from PyPI (\(requirements.lastPathComponent)): \(failure)"))
        }
        try? wanted.write(to: marker, atomically: true, encoding: .utf8)
        return .success(python)
    }
}

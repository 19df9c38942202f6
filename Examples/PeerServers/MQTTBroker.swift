#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import Foundation
import SDK

/// A real, unmodified mosquitto 2.0 broker for the MQTT adapter's tests, the chaos tool and the
/// demo: the system's, or Debian's package unpacked under `.build/mosquitto` by
/// `Apps/provision-mosquitto` on first use (nothing installed system-wide, no service started).
/// It listens on 127.0.0.1 only — a websockets listener, and the plain TCP listener 2.0.11 needs
/// beside it to start at all — on free ports, with a password file and persistence in a
/// directory of its own, and is stopped by its process id. It runs through `Apps/tethered.py
/// --exec` (same pid), so it also ends when this process ends without stopping it. When it
/// cannot be provisioned the caller fails with what is missing — never a silent skip.
public final class MQTTBroker: Sendable {
    /// The user every broker accepts, and its password (the session's token).
    public static let username = "tether"
    public static let password = "s3cret"

    /// The websockets listener's port.
    public let port: Int
    /// The plain TCP listener's port.
    public let tcpPort: Int
    /// Where its configuration, password file and persistence live (kept across a restart).
    public let directory: URL
    private let child: ChildProcess

    private init(child: ChildProcess, port: Int, tcpPort: Int, directory: URL) {
        self.child = child
        self.port = port
        self.tcpPort = tcpPort
        self.directory = directory
    }

    /// `ws://127.0.0.1:PORT/`.
    public var url: URL { URL(string: "ws://127.0.0.1:\(port)/")! }

    static let provisioning = Provisioning()

    /// The broker's path, found or unpacked once per process.
    final class Provisioning: Sendable {
        private let result = Locked<Result<URL, PeerServer.Unavailable>?>(nil)
        private let done = OneShot()

        init() {
            let result = self.result, done = self.done
            Task.detached {
                let script = PeerServer.apps.appendingPathComponent("provision-mosquitto").path
                let (lines, failure) = await ChildProcess.output("/bin/bash", [script])
                let outcome: Result<URL, PeerServer.Unavailable>
                if let failure {
                    outcome = .failure(PeerServer.Unavailable(description: "mosquitto (Debian package mosquitto 2.0) is needed for the MQTT tests and could not be set up: \(failure)"))
                } else if let path = lines.last, path.hasPrefix("/") {
                    outcome = .success(URL(fileURLWithPath: path))
                } else {
                    outcome = .failure(PeerServer.Unavailable(description: "provision-mosquitto printed no path: \(lines.suffix(3))"))
                }
                result.withLock { $0 = outcome }
                done.fire()
            }
        }

        func mosquitto() async throws -> URL {
            await done.wait()
            guard let outcome = result.withLock({ $0 }) else { throw PeerServer.Unavailable(description: "provisioning was interrupted") }
            return try outcome.get()
        }
    }

    /// Starts a broker on free ports with a fresh directory, or — `restarting` — a new broker
    /// process where a stopped one was (same ports, same persistence).
    public static func start(restarting previous: MQTTBroker? = nil, persistence: Bool = true) async throws -> MQTTBroker {
        let mosquitto = try await provisioning.mosquitto()
        if let previous {
            let child = try await launch(mosquitto, in: previous.directory, port: previous.port, tcpPort: previous.tcpPort, persistence: persistence)
            return MQTTBroker(child: child, port: previous.port, tcpPort: previous.tcpPort, directory: previous.directory)
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-mosquitto-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent("data"), withIntermediateDirectories: true)
            try await writePasswordFile(to: directory.appendingPathComponent("passwords"), mosquitto: mosquitto)
            // A free port can be taken by another process before mosquitto binds it: new ports,
            // up to three times.
            var attempt = 0
            while true {
                attempt += 1
                let ports = try freePorts(2)
                do {
                    let child = try await launch(mosquitto, in: directory, port: ports[0], tcpPort: ports[1], persistence: persistence)
                    return MQTTBroker(child: child, port: ports[0], tcpPort: ports[1], directory: directory)
                } catch let error as PeerServer.Unavailable where error.description.contains("Unable to create") && attempt < 3 {
                    continue
                }
            }
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// Writes the broker's configuration into `directory`, starts it, and waits until it runs.
    private static func launch(_ mosquitto: URL, in directory: URL, port: Int, tcpPort: Int, persistence: Bool) async throws -> ChildProcess {
        let configuration = """
        per_listener_settings false
        allow_anonymous false
        password_file \(directory.appendingPathComponent("passwords").path)
        persistence \(persistence)
        persistence_location \(directory.appendingPathComponent("data").path)/
        autosave_interval 1
        user \(String(cString: getpwuid(geteuid()).pointee.pw_name))
        listener \(tcpPort) 127.0.0.1
        listener \(port) 127.0.0.1
        protocol websockets
        socket_domain ipv4
        log_dest stderr
        log_type error
        log_type warning
        log_type notice
        log_type information
        connection_messages true

        """
        let file = directory.appendingPathComponent("mosquitto.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        let tether = PeerServer.apps.appendingPathComponent("tethered.py").path
        let child = try ChildProcess("/usr/bin/env", ["python3", tether, "--exec", mosquitto.path, "-c", file.path], environment: libraryPath(for: mosquitto))
        // The stderr log is unbuffered: "running" arrives as it is written (stdout would not).
        guard try await waitUntilRunning(child) else {
            child.send(SIGKILL)
            await child.exited()
            throw PeerServer.Unavailable(description: "mosquitto did not report running within 30 s")
        }
        Task.detached { for await _ in child.lines {} }
        return child
    }

    /// True once the broker logs that it runs; false after 30 s; throws when it exits first.
    private static func waitUntilRunning(_ child: ChildProcess) async throws -> Bool {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                var log: [String] = []
                for await line in child.lines {
                    log.append(line)
                    if line.contains("mosquitto version"), line.contains("running") { return true }
                }
                throw PeerServer.Unavailable(description: "mosquitto exited before it listened:\n" + log.suffix(20).joined(separator: "\n"))
            }
            group.addTask {
                try await Task.sleep(for: .seconds(30))
                return false
            }
            let first = try await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// Runs `body` with a broker running; stops it and removes its directory afterwards, also
    /// when `body` throws.
    public static func withRunning<Result: Sendable>(_ body: (MQTTBroker) async throws -> Result) async throws -> Result {
        let broker = try await start()
        do {
            let result = try await body(broker)
            await broker.stop(removingDirectory: true)
            return result
        } catch {
            await broker.stop(removingDirectory: true)
            throw error
        }
    }

    /// Stops the broker by its process id (SIGTERM: it saves its persistence; SIGKILL after 5 s).
    public func stop(removingDirectory: Bool = false) async {
        if !child.hasExited {
            child.send(SIGCONT)
            child.send(SIGTERM)
            if await !child.exited(within: .seconds(5)) {
                child.send(SIGKILL)
                await child.exited()
            }
        }
        if removingDirectory { try? FileManager.default.removeItem(at: directory) }
    }

    /// Sends `signal` to the broker's process (SIGKILL, SIGSTOP, SIGCONT).
    public func send(_ signal: Int32) {
        child.send(signal)
    }

    /// Waits for the process to exit (after a SIGKILL).
    public func exited() async {
        _ = await child.exited()
    }

    /// The unpacked package's libraries, for a broker run from `.build/mosquitto`.
    private static func libraryPath(for mosquitto: URL) -> [String: String] {
        let usr = mosquitto.deletingLastPathComponent().deletingLastPathComponent()
        guard usr.path.contains("/.build/mosquitto/") else { return [:] }
        let directories = ["x86_64-linux-gnu", "aarch64-linux-gnu"].map { usr.appendingPathComponent("lib/\($0)").path }
        return ["LD_LIBRARY_PATH": directories.joined(separator: ":")]
    }

    private static func writePasswordFile(to file: URL, mosquitto: URL) async throws {
        // mosquitto_passwd sits in bin/ beside sbin/ (the package's layout).
        let tool = mosquitto.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("bin/mosquitto_passwd")
        if let failure = await ChildProcess.run(tool.path, ["-b", "-c", file.path, username, password], environment: libraryPath(for: mosquitto)) {
            throw PeerServer.Unavailable(description: "mosquitto_passwd failed: \(failure)")
        }
    }

    /// A port nothing listens on now (the kernel's pick; mosquitto cannot be asked for port 0).
    /// `count` distinct free loopback ports: each socket stays bound until all are chosen (a
    /// port released at once can be handed out again by the next call).
    private static func freePorts(_ count: Int) throws -> [Int] {
        var sockets: [Int32] = []
        defer { for fd in sockets { close(fd) } }
        var ports: [Int] = []
        for _ in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw PeerServer.Unavailable(description: "socket() failed: errno \(errno)") }
            sockets.append(fd)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = 0
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
            guard bound == 0 else { throw PeerServer.Unavailable(description: "bind() failed: errno \(errno)") }
            let named = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
            guard named == 0 else { throw PeerServer.Unavailable(description: "getsockname() failed: errno \(errno)") }
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
        }
        return ports
    }
}

import Foundation
import PeerServers

/// A real third-party server for a chaos run (strawberry-graphql or python-socketio), on one
/// port for the whole run, with process-level faults: kill, stop/continue, restart.
actor PeerHost {
    let app: PeerServer.App
    let port: Int
    private let environment: [String: String]
    private var server: PeerServer?
    private var isStopped = false

    private init(app: PeerServer.App, server: PeerServer, environment: [String: String]) {
        self.app = app
        self.port = server.port
        self.server = server
        self.environment = environment
    }

    static func start(_ app: PeerServer.App, environment: [String: String]) async throws -> PeerHost {
        PeerHost(app: app, server: try await PeerServer.start(app, environment: environment), environment: environment)
    }

    func kill() async {
        guard let server else { return }
        server.send(SIGKILL)
        await server.exited()
        self.server = nil
        isStopped = false
    }

    /// Starts the server again if it is down (a few tries: the port may linger a moment).
    func start() async throws {
        guard server == nil else { return }
        var lastError: (any Error)?
        for _ in 0..<10 {
            do {
                server = try await PeerServer.start(app, port: port, environment: environment)
                return
            } catch {
                lastError = error
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        throw lastError ?? PeerServer.Unavailable(description: "could not restart \(app.rawValue) on port \(port)")
    }

    func stop() {
        guard let server, !isStopped else { return }
        server.send(SIGSTOP)
        isStopped = true
    }

    func resume() {
        guard let server, isStopped else { return }
        server.send(SIGCONT)
        isStopped = false
    }

    func restart() async throws {
        if let server {
            await server.stop()
            self.server = nil
            isStopped = false
        }
        try await start()
    }

    /// No fault left: running and not stopped.
    func heal() async throws {
        resume()
        try await start()
    }

    func shutdown() async {
        resume()
        await server?.stop()
        server = nil
    }
}

import Foundation
import PeerServers

/// A real third-party server for a chaos run (strawberry-graphql, python-socketio or mosquitto),
/// on one port for the whole run, with process-level faults: kill, stop/continue, restart.
actor PeerHost {
    /// Which server, and how to start it (again, where it was).
    enum Kind: Sendable {
        case app(PeerServer.App, environment: [String: String])
        case mosquitto

        var name: String {
            switch self {
            case .app(let app, _): app.rawValue
            case .mosquitto: "mosquitto"
            }
        }
    }

    /// One running server process.
    enum Running: Sendable {
        case app(PeerServer)
        case broker(MQTTBroker)

        var port: Int {
            switch self {
            case .app(let server): server.port
            case .broker(let broker): broker.port
            }
        }

        func send(_ signal: Int32) {
            switch self {
            case .app(let server): server.send(signal)
            case .broker(let broker): broker.send(signal)
            }
        }

        func exited() async {
            switch self {
            case .app(let server): await server.exited()
            case .broker(let broker): await broker.exited()
            }
        }

        func stop() async {
            switch self {
            case .app(let server): await server.stop()
            case .broker(let broker): await broker.stop()
            }
        }
    }

    let kind: Kind
    let port: Int
    private var server: Running?
    /// The first broker: where a restarted one finds its ports and persistence.
    private let original: Running
    private var isStopped = false

    private init(kind: Kind, server: Running) {
        self.kind = kind
        self.port = server.port
        self.server = server
        self.original = server
    }

    static func start(_ kind: Kind) async throws -> PeerHost {
        PeerHost(kind: kind, server: try await launch(kind, previous: nil, port: 0))
    }

    private static func launch(_ kind: Kind, previous: Running?, port: Int) async throws -> Running {
        switch kind {
        case .app(let app, let environment):
            return .app(try await PeerServer.start(app, port: port, environment: environment))
        case .mosquitto:
            guard case .broker(let broker)? = previous else { return .broker(try await MQTTBroker.start()) }
            return .broker(try await MQTTBroker.start(restarting: broker))
        }
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
                server = try await Self.launch(kind, previous: original, port: port)
                return
            } catch {
                lastError = error
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        throw lastError ?? PeerServer.Unavailable(description: "could not restart \(kind.name) on port \(port)")
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
        if case .broker(let broker) = original { await broker.stop(removingDirectory: true) }
    }
}

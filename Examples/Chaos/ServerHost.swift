import ReferenceServer
import SDK

/// The reference server for a chaos run, on one port for its whole life, restartable (a
/// restart loses its channels' history, as a real one would).
actor ServerHost {
    let port: Int
    private(set) var server: RealtimeServer
    private var task: Task<Void, any Error>

    private init(port: Int, server: RealtimeServer, task: Task<Void, any Error>) {
        self.port = port
        self.server = server
        self.task = task
    }

    static func start(port: Int = 0) async throws -> ServerHost {
        let (server, task, bound) = try await launch(port: port)
        return ServerHost(port: bound, server: server, task: task)
    }

    private static func launch(port: Int) async throws -> (RealtimeServer, Task<Void, any Error>, Int) {
        let server = RealtimeServer(RealtimeServer.Configuration(port: port, tokens: ["chaos"]))
        let (ports, sink) = AsyncStream<Int>.makeStream()
        let task = Task {
            defer { sink.finish() }
            try await server.run { sink.yield($0) }
        }
        var iterator = ports.makeAsyncIterator()
        guard let bound = await iterator.next() else {
            _ = await task.result
            throw TransportError(.connectionFailed, "the chaos server did not bind port \(port)")
        }
        return (server, task, bound)
    }

    /// Stops the server (every connection dies) and starts a fresh one on the same port,
    /// keeping the faults.
    func restart() async throws {
        let faults = server.faults
        task.cancel()
        _ = await task.result
        var lastError: (any Error)?
        for _ in 0..<20 {
            do {
                let (server, task, _) = try await Self.launch(port: port)
                server.setFaults(faults)
                self.server = server
                self.task = task
                return
            } catch {
                lastError = error
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        throw lastError ?? TransportError(.connectionFailed, "could not restart")
    }

    func stop() async {
        task.cancel()
        _ = await task.result
    }
}

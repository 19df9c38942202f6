import Foundation
import ReferenceServer

// swift run realtime-server --port 8080 [--host 127.0.0.1] [--token T]... [--tokens-file F]
//   [--retention N] [--delay-ms N] [--refuse] [--freeze] [--reject-credentials]
//   [--upgrade-timeout-ms N] [--auth-timeout-ms N] [--idle-timeout-ms N] [--max-queued-bytes N]
//   [--dedupe-window-ms N] [--pid-file F]

let usage = """
    usage: realtime-server [--host H] [--port P] [--token T]... [--tokens-file F] [--retention N]
                           [--delay-ms N] [--refuse] [--freeze] [--reject-credentials]
                           [--upgrade-timeout-ms 10000] [--auth-timeout-ms 10000] [--idle-timeout-ms 120000]
                           [--max-queued-bytes 8388608] [--dedupe-window-ms 120000] [--port-file F]
    Faults can be changed while it runs: GET /admin/{status,drop,close?code=N[&reason=R|&retry-after-ms=N],
    refuse?on=1,freeze?on=1,reject?on=1,delay?ms=N,publish?channel=C&text=T[&count=N|&each=N][&json=1],reset}
    on the same port.
    --port 0 picks a free port; --port-file F writes the port to F once the server listens.
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("realtime-server: \(message)\n\(usage)\n".utf8))
    exit(2)
}

func parse(_ arguments: [String]) -> (RealtimeServer.Configuration, portFile: String?) {
    var configuration = RealtimeServer.Configuration(port: 8080)
    var portFile: String?
    var tokens: Set<String> = []
    var arguments = arguments[...]
    func value(_ flag: String) -> String {
        guard let value = arguments.popFirst() else { fail("\(flag) needs a value") }
        return value
    }
    func milliseconds(_ flag: String) -> Duration {
        guard let milliseconds = Int64(value(flag)), milliseconds > 0 else { fail("\(flag) takes milliseconds") }
        return .milliseconds(milliseconds)
    }
    while let argument = arguments.popFirst() {
        switch argument {
        case "--host": configuration.host = value(argument)
        case "--port":
            guard let port = Int(value(argument)), (0...65535).contains(port) else { fail("--port takes 0...65535") }
            configuration.port = port
        case "--token": tokens.insert(value(argument))
        case "--tokens-file":
            let path = value(argument)
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { fail("cannot read \(path)") }
            for line in text.split(whereSeparator: \.isNewline) where !line.trimmingCharacters(in: .whitespaces).isEmpty {
                tokens.insert(line.trimmingCharacters(in: .whitespaces))
            }
        case "--retention":
            guard let retention = Int(value(argument)), retention >= 0 else { fail("--retention takes a count") }
            configuration.retention = retention
        case "--delay-ms":
            guard let milliseconds = Int64(value(argument)), milliseconds >= 0 else { fail("--delay-ms takes milliseconds") }
            configuration.faults.frameDelay = .milliseconds(milliseconds)
        case "--upgrade-timeout-ms": configuration.limits.upgradeTimeout = milliseconds(argument)
        case "--auth-timeout-ms": configuration.limits.authenticationTimeout = milliseconds(argument)
        case "--idle-timeout-ms": configuration.limits.idleTimeout = milliseconds(argument)
        case "--dedupe-window-ms": configuration.limits.deduplicationWindow = milliseconds(argument)
        case "--max-queued-bytes":
            guard let bytes = Int(value(argument)), bytes >= 1 << 20 else { fail("--max-queued-bytes takes at least 1048576 (one frame)") }
            configuration.limits.maxQueuedBytes = bytes
        case "--port-file": portFile = value(argument)
        case "--refuse": configuration.faults.refuseConnections = true
        case "--freeze": configuration.faults.freeze = true
        case "--reject-credentials": configuration.faults.rejectCredentials = true
        case "--help", "-h":
            print(usage)
            exit(0)
        default: fail("unknown argument \(argument)")
        }
    }
    configuration.tokens = tokens.isEmpty ? nil : tokens
    return (configuration, portFile)
}

let (configuration, portFile) = parse(Array(CommandLine.arguments.dropFirst()))
let server = RealtimeServer(configuration)
let host = configuration.host
let tokenNote = configuration.tokens.map { "\($0.count) token(s) accepted" } ?? "any token accepted"
let faults = configuration.faults
try await server.run { port in
    print("realtime-server: listening on ws://\(host):\(port)/ (\(tokenNote); faults: \(faults))")
    if let portFile { try? String(port).write(toFile: portFile, atomically: true, encoding: .utf8) }
}

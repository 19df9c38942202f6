import Conformance
import Foundation

// swift run conformance --port P --token T [--host H] [--auth-timeout-ms N] [--upgrade-timeout-ms N]
//   [--idle-timeout-ms N] [--pid PID] [--idle-sockets N] [--flood-messages N] [--only TEXT]

let usage = """
    usage: conformance --port P --token T [--host 127.0.0.1] [--auth-timeout-ms 10000] [--upgrade-timeout-ms 10000]
                       [--idle-timeout-ms N] [--pid PID] [--idle-sockets 2000] [--flood-messages 2000] [--only TEXT]
    Runs every check of docs/PROTOCOL.md against a running server (it must accept the token T and
    reject others). The timeouts are the server's own; --pid lets the memory checks read its RSS.
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("conformance: \(message)\n\(usage)\n".utf8))
    exit(2)
}

func parse(_ list: [String]) -> (ConformanceSuite.Target, only: String?) {
    var arguments = list[...]
    var port: Int?, token: String?, only: String?
    var target = ConformanceSuite.Target(port: 0, token: "")
    func value(_ flag: String) -> String {
        guard let value = arguments.popFirst() else { fail("\(flag) needs a value") }
        return value
    }
    func number(_ flag: String) -> Int {
        guard let value = Int(value(flag)), value >= 0 else { fail("\(flag) takes a whole number") }
        return value
    }
    func milliseconds(_ flag: String) -> Duration {
        let value = number(flag)
        guard value > 0 else { fail("\(flag) takes milliseconds") }
        return .milliseconds(value)
    }
    while let argument = arguments.popFirst() {
        switch argument {
        case "--host": target.host = value(argument)
        case "--port": port = number(argument)
        case "--token": token = value(argument)
        case "--auth-timeout-ms": target.authenticationTimeout = milliseconds(argument)
        case "--upgrade-timeout-ms": target.upgradeTimeout = milliseconds(argument)
        case "--idle-timeout-ms": target.idleTimeout = milliseconds(argument)
        case "--pid": target.pid = Int32(clamping: number(argument))
        case "--idle-sockets": target.idleSockets = number(argument)
        case "--flood-messages": target.floodMessages = number(argument)
        case "--only": only = value(argument)
        case "--help", "-h":
            print(usage)
            exit(0)
        default: fail("unknown argument \(argument)")
        }
    }
    guard let port, (1...65535).contains(port) else { fail("--port is required") }
    guard let token, !token.isEmpty else { fail("--token is required (one the server accepts)") }
    target.port = port
    target.token = token
    return (target, only)
}

let (target, only) = parse(Array(CommandLine.arguments.dropFirst()))
let outcomes = await ConformanceSuite(target).run(only: only) { outcome in
    let time = String(format: "%.2f s", Double(outcome.duration.components.seconds) + Double(outcome.duration.components.attoseconds) / 1e18)
    if let failure = outcome.failure {
        print("FAIL \(outcome.name) (\(time)): \(failure)")
    } else {
        print("PASS \(outcome.name) (\(time))")
    }
}
let failed = outcomes.filter { $0.failure != nil }.count
print("conformance: \(outcomes.count - failed) passed, \(failed) failed")
exit(failed == 0 ? 0 : 1)

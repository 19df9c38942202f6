import Foundation
import ReferenceServer
import SDK

/// `swift run demo`: starts the reference server on a free loopback port in this process and
/// narrates one session in each mode over real sockets, checking each step.
/// `swift run demo --interactive [--manual]`: drive a session from the keyboard.
/// `swift run demo --protocol graphql-ws|socket.io|mqtt|phoenix --url URL [--token T]`: the narrated, checked
/// session against a server you run (see the README, "Use with your backend").
@main
struct Demo {
    static func option(_ name: String) -> String? {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }

    static func main() async {
        let arguments = CommandLine.arguments.dropFirst()
        let narrator = Narrator()
        if let name = option("--protocol") {
            await againstBackend(name, narrator: narrator)
            return
        }
        let server = RealtimeServer(RealtimeServer.Configuration(tokens: ["demo-token"]))
        do {
            try await server.withRunning { port in
                narrator.say("reference server listening on ws://127.0.0.1:\(port)/ (in this process)")
                if arguments.contains("--interactive") {
                    try await Interactive(server: server, port: port, narrator: narrator, auto: !arguments.contains("--manual")).run()
                } else {
                    let scenarios = Scenarios(server: server, port: port, narrator: narrator)
                    try await scenarios.auto()
                    try await scenarios.manual()
                }
            }
        } catch {
            narrator.check(false, "the demo ran", detail: "\(error)")
        }
        if !arguments.contains("--interactive") {
            print("\ndemo: \(narrator.passed) checks passed, \(narrator.failed) failed")
            exit(narrator.failed == 0 && narrator.passed > 0 ? 0 : 1)
        }
    }

    static func againstBackend(_ name: String, narrator: Narrator) async {
        guard let backend = BackendScenarios.backend(name, option: option), let url = option("--url") else {
            print("usage: swift run demo --protocol graphql-ws|socket.io|mqtt|phoenix --url ws://127.0.0.1:PORT/PATH [--token T]")
            print("       [--subscription DOC --mutation DOC] (graphql-ws) [--room NAME] (socket.io) [--topic T] (mqtt, phoenix)")
            exit(2)
        }
        let scenarios = BackendScenarios(url: url, token: option("--token") ?? "s3cret", backend: backend, narrator: narrator)
        do {
            try await scenarios.auto()
            try await scenarios.manual()
        } catch {
            narrator.check(false, "the demo ran", detail: "\(error)")
        }
        print("\ndemo: \(narrator.passed) checks passed, \(narrator.failed) failed")
        exit(narrator.failed == 0 && narrator.passed > 0 ? 0 : 1)
    }
}

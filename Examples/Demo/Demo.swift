import Foundation
import ReferenceServer
import SDK

/// `swift run demo`: starts the reference server on a free loopback port in this process and
/// narrates one session in each mode over real sockets, checking each step.
/// `swift run demo --interactive [--manual]`: drive a session from the keyboard.
@main
struct Demo {
    static func main() async {
        let arguments = CommandLine.arguments.dropFirst()
        let narrator = Narrator()
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
}

import Conformance
import NIOTransport
import ReferenceServer
import SDK
import SDKTesting
import Testing

/// Review item 9.13: the admin endpoint puts only valid close codes on the wire, 4429 only with
/// its delay; `refuse` answers 503; `freeze` holds traffic (and says so).
@Suite("The reference server's admin endpoint", .timeLimit(.minutes(1)))
struct AdminEndpointIntegrationTests {
    @Test("close codes that must never be sent are refused; 4429 needs its delay", arguments: ["1005", "1006", "1015", "999", "5000", "1004", "2000", "4429"])
    func invalidCloseCodes(code: String) async throws {
        try await withReferenceServer { server, port in
            let client = try await RawWebSocket.upgraded(host: "127.0.0.1", port: port)
            try await client.sendText(#"{"type":"auth","id":1,"token":"it-token"}"#)
            _ = try await client.nextText()
            let answer = try await httpGet(port: port, path: "/admin/close?code=\(code)")
            #expect(answer.contains("must never be sent") || answer.contains("4429 needs"), "\(answer)")
            // The connection is untouched: it still answers.
            try await client.sendText(#"{"type":"ping","id":2}"#)
            #expect(try await client.nextText()?.contains("pong") == true)
            await client.close()
        }
    }

    @Test("4429 with its delay, and a valid code, reach the client")
    func validCloseCodes() async throws {
        try await withReferenceServer { server, port in
            for (path, code) in [("/admin/close?code=4429&retry-after-ms=250", UInt16(4429)), ("/admin/close?code=4000&reason=bye", 4000)] {
                let client = try await RawWebSocket.upgraded(host: "127.0.0.1", port: port)
                try await client.sendText(#"{"type":"auth","id":1,"token":"it-token"}"#)
                _ = try await client.nextText()
                _ = try await httpGet(port: port, path: path)
                let close = try await client.closeFrame()
                #expect(close?.closeCode == code)
                if code == 4429 { #expect(close.map { String(decoding: $0.payload.dropFirst(2), as: UTF8.self) } == "retry-after-ms=250") }
                await client.close()
            }
        }
    }

    @Test("refuse answers an upgrade with 503")
    func refuseIs503() async throws {
        var configuration = RealtimeServer.Configuration(tokens: ["it-token"])
        configuration.faults.refuseConnections = true
        try await withReferenceServer(configuration) { _, port in
            let socket = try await RawWebSocket.connect(host: "127.0.0.1", port: port)
            #expect(try await socket.upgrade(host: "127.0.0.1", port: port) == 503)
            await socket.close()
        }
    }

    @Test("freeze holds traffic both ways; the thaw delivers it, in order")
    func freezeHolds() async throws {
        try await withReferenceServer { server, port in
            let client = try await RawWebSocket.upgraded(host: "127.0.0.1", port: port)
            try await client.sendText(#"{"type":"auth","id":1,"token":"it-token"}"#)
            _ = try await client.nextText()
            try await client.sendText(#"{"type":"subscribe","id":2,"channel":"room"}"#)
            _ = try await client.nextText()
            server.updateFaults { $0.freeze = true }
            try await client.sendText(#"{"type":"ping","id":3}"#)
            try server.publish("held", to: "room")
            await #expect(throws: RawWebSocket.Failure.self) { try await client.nextText(within: .milliseconds(300)) }
            server.updateFaults { $0.freeze = false }
            let first = try await client.nextText()
            let second = try await client.nextText()
            #expect([first, second].contains { $0?.contains(#""type":"pong""#) == true })
            #expect([first, second].contains { $0?.contains(#""data":"held""#) == true })
            await client.close()
        }
    }
}

import Foundation
import NIOTransport
import SDK
import SDKTesting
import Testing

extension HostileServer.Behaviour {
    /// What the disconnect reason's detail may say. When the socket itself ends, TCP decides
    /// whether the client sees an orderly close or an error (a reset: the server closed while the
    /// client's `auth` was on its way): either is reported as it happened. A protocol violation
    /// is always named.
    var expectedDetails: [String] {
        switch self {
        case .truncatedFrame, .oversizeLength: ["connection closed", "connection error: "]
        case .reservedOpcode: ["protocol violation: a frame with reserved opcode"]
        case .maskedFrame: ["protocol violation: the server sent a masked frame"]
        case .reservedBit: ["protocol violation: a frame with reserved bits set"]
        case .invalidUTF8, .truncatedFourByteSequence: ["protocol violation: a text frame that is not UTF-8"]
        }
    }
}

@Suite("A hostile server: broken framing after the upgrade", .timeLimit(.minutes(1)))
struct HostileServerIntegrationTests {
    // Each case ends within a few milliseconds; before the NIO transport forwarded the bytes
    // that arrive with the 101, and reported a close that came during the upgrade, they sat
    // until the connect timeout (the connection looked open and delivered nothing).
    @Test("the connection ends at once as networkLost with what went wrong, is retried, and never counts as connected", arguments: HostileServer.Behaviour.allCases)
    func brokenFraming(_ behaviour: HostileServer.Behaviour) async throws {
        let server = HostileServer(behaviour)
        try await server.withRunning { port in
            // The violation ends the attempt within milliseconds; the connect timeout is long so
            // that a loaded machine (TSan, the peer servers starting alongside) can never turn
            // it into "connecting took longer" — that would be a flake, not what is tested.
            let session = Session(settings: try integrationSettings(port: port) { $0.connectTimeout(.seconds(30)) }, transport: NIOWebSocketTransport())
            try await withRunningSession(session, patience: .realServer) { status in
                var upgrades = server.upgrades.makeAsyncIterator()
                for attempt in 1...3 {
                    #expect(await upgrades.next() != nil, "upgrade \(attempt)")
                    let passed = try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
                    #expect(!passed.contains(.connected))
                    guard case .reconnecting(let reason) = passed.last else { continue }
                    #expect(reason.code == .networkLost, "\(reason)")
                    let detail = reason.detail ?? ""
                    #expect(behaviour.expectedDetails.contains { detail.hasPrefix($0) }, "\(reason)")
                }
            }
        }
    }

    @Test("text frames of one- to four-byte UTF-8 sequences reach the app byte for byte")
    func multibyteText() async throws {
        let texts = ["plain", "café", "€ 5", "𝄞 and 😀", "日本語", ""]
        var bytes: [UInt8] = []
        for text in texts {
            let payload = Array(text.utf8)
            bytes += [0x81, UInt8(payload.count)] + payload
        }
        let server = HostileServer(bytes: bytes)
        try await server.withRunning { port in
            let connection = try await NIOWebSocketTransport().open(url: #require(URL(string: "ws://127.0.0.1:\(port)/")), headers: [:])
            var events = connection.events.makeAsyncIterator()
            for text in texts {
                let event = await events.next()
                guard case .frame(.text(let received))? = event else {
                    Issue.record("expected the text \(text.debugDescription), got \(String(describing: event))")
                    return
                }
                #expect(Array(received.utf8) == Array(text.utf8))
            }
            await connection.close(code: .normal, reason: "done")
        }
    }
}

/// RFC 6455 as `docs/PROTOCOL.md` requires a server to enforce it.
extension ConformanceSuite {
    static let frameChecks: [Check] = [
        Check(name: "an unmasked client frame fails the connection with 1002") { target in
            let client = try await ProtocolClient.authenticated(target)
            try await client.socket.sendFrame(opcode: 0x1, Array(#"{"type":"ping","id":2}"#.utf8), masked: false)
            try await client.expectClose(1002)
            await client.close()
        },
        Check(name: "a frame with a reserved bit fails the connection with 1002") { target in
            let client = try await ProtocolClient.authenticated(target)
            try await client.socket.sendFrame(opcode: 0x1, Array(#"{"type":"ping","id":2}"#.utf8), rsv: 0x40)
            try await client.expectClose(1002)
            await client.close()
        },
        Check(name: "a frame with a reserved opcode fails the connection with 1002") { target in
            let client = try await ProtocolClient.authenticated(target)
            try await client.socket.sendFrame(opcode: 0x3, [])
            try await client.expectClose(1002)
            await client.close()
        },
        Check(name: "invalid UTF-8 in a text frame closes the connection with 1007, in data and in a channel name") { target in
            for frame in [Array(#"{"type":"publish","id":2,"channel":"c","data":""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8),
                          Array(#"{"type":"subscribe","id":2,"channel":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)] {
                let client = try await ProtocolClient.authenticated(target)
                try await client.socket.sendFrame(opcode: 0x1, frame)
                try await client.expectClose(1007)
                await client.close()
            }
        },
        Check(name: "a close frame with a code that must never be sent (999, 1005, 1006, 1015, 5000) or a one-byte body is answered 1002") { target in
            for code: UInt16 in [999, 1005, 1006, 1015, 5000] {
                let client = try await ProtocolClient.authenticated(target)
                try await client.socket.sendClose(code: code)
                try await client.expectClose(1002)
                await client.close()
            }
            let client = try await ProtocolClient.authenticated(target)
            try await client.socket.sendFrame(opcode: 0x8, [0x03])
            try await client.expectClose(1002)
            await client.close()
        },
        Check(name: "a close frame with a valid code is echoed") { target in
            for code: UInt16 in [1000, 1001, 4000] {
                let client = try await ProtocolClient.authenticated(target)
                try await client.socket.sendClose(code: code, reason: "bye")
                try await client.expectClose(code)
                await client.close()
            }
        },
    ]
}

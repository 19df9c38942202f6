import NIOCore
import NIOHTTP1
import NIOPosix

/// A minimal HTTP/1.1 GET over loopback, for the admin endpoint.
func httpGet(port: Int, path: String) async throws -> String {
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHTTPClientHandlers()
                return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
            }
        }
    return try await channel.executeThenClose { inbound, outbound in
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "127.0.0.1:\(port)")
        try await outbound.write(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)))
        try await outbound.write(.end(nil))
        var body = ""
        for try await part in inbound {
            switch part {
            case .head: break
            case .body(let buffer): body += String(buffer: buffer)
            case .end: return body
            }
        }
        return body
    }
}

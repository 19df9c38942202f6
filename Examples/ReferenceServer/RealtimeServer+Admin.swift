import Foundation
import NIOCore
import NIOHTTP1
import SDK

extension RealtimeServer {
    /// Plain HTTP on the same port: the admin endpoint, for changing faults from another
    /// process (`curl http://127.0.0.1:8080/admin/freeze?on=1`). It has no authentication:
    /// keep the server on loopback (the default host).
    func serveHTTP(_ channel: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, refused: (status: Int, reason: String)?) async {
        try? await channel.executeThenClose { inbound, outbound in
            // A declined upgrade (refused, or a path other than `/`) reaches here without its
            // head: the upgrade handler consumed it while deciding.
            var uri: String?
            for try await part in inbound {
                switch part {
                case .head(let head):
                    uri = head.uri
                case .body:
                    break
                case .end:
                    let (status, body): (HTTPResponseStatus, String) = switch uri {
                    case _ where refused != nil: (HTTPResponseStatus(statusCode: refused?.status ?? 400), (refused?.reason ?? "") + "\n")
                    case let uri?: admin(uri)
                    case nil where faults.refuseConnections: (.serviceUnavailable, "refusing connections (fault)\n")
                    case nil: (.notFound, "the WebSocket endpoint is /\n")
                    }
                    var headers = HTTPHeaders()
                    headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
                    headers.add(name: "Content-Length", value: String(body.utf8.count))
                    headers.add(name: "Connection", value: "close")
                    try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers)))
                    try await outbound.write(.body(.byteBuffer(ByteBuffer(string: body))))
                    try await outbound.write(.end(nil))
                    return
                }
            }
        }
    }

    /// Carries out one admin request; returns the status and a one-line answer.
    func admin(_ uri: String) -> (HTTPResponseStatus, String) {
        guard let components = URLComponents(string: uri) else { return (.badRequest, "bad request\n") }
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] { query[item.name] = item.value ?? "" }
        let on = query["on"].map { $0 == "1" || $0 == "true" } ?? true
        switch components.path {
        case "/":
            return (.upgradeRequired, "this is a WebSocket endpoint; see docs/PROTOCOL.md\n")
        case "/admin/status":
            return (.ok, "connections=\(openConnectionCount) accepted=\(acceptedConnectionCount) frames_sent=\(framesSentCount) \(faults)\n")
        case "/admin/drop":
            dropAllConnections()
            return (.ok, "dropped\n")
        case "/admin/close":
            guard let code = query["code"].flatMap(UInt16.init).map(CloseCode.init) else { return (.badRequest, "close needs code=N\n") }
            var reason = query["reason"] ?? ""
            if let milliseconds = query["retry-after-ms"] {
                guard let value = Int64(milliseconds), value >= 0 else { return (.badRequest, "retry-after-ms takes milliseconds\n") }
                reason = CloseCode.retryAfterReason(.milliseconds(value))
            }
            if code == .retryAfter, CloseCode.retryAfterMilliseconds(in: reason) == nil {
                return (.badRequest, "4429 needs retry-after-ms=N (or reason=retry-after-ms=N)\n")
            }
            do {
                try closeAllConnections(code: code, reason: reason)
            } catch {
                return (.badRequest, "\(error)\n")
            }
            return (.ok, "closed with \(code)\n")
        case "/admin/refuse":
            updateFaults { $0.refuseConnections = on }
            return (.ok, "refuse=\(on)\n")
        case "/admin/freeze":
            updateFaults { $0.freeze = on }
            return (.ok, "freeze=\(on)\n")
        case "/admin/reject":
            updateFaults { $0.rejectCredentials = on }
            return (.ok, "rejectCredentials=\(on)\n")
        case "/admin/delay":
            guard let milliseconds = query["ms"].flatMap(Int64.init), milliseconds >= 0, milliseconds <= 600_000 else {
                return (.badRequest, "delay needs ms=0...600000\n")
            }
            updateFaults { $0.frameDelay = .milliseconds(milliseconds) }
            return (.ok, "delay=\(milliseconds)ms\n")
        case "/admin/reset":
            setFaults(ServerFaults())
            return (.ok, "faults cleared\n")
        case "/admin/publish":
            // count=N publishes N messages to the channel; each=N publishes one to each of the
            // channels NAME0 … NAME(N-1); paced=K publishes the count in groups of 1 … K, a
            // little apart (benchmarks drive a server in its own process with it).
            guard let channel = query["channel"], !channel.isEmpty else { return (.badRequest, "publish needs channel=NAME\n") }
            let count = query["count"].flatMap(Int.init) ?? 1
            let each = query["each"].flatMap(Int.init)
            let data: JSONValue = query["json"] != nil ? ["text": "the quick brown fox jumps over the lazy dog", "from": "ada", "n": 42] : .string(query["text"] ?? "")
            do {
                var sequence: UInt64 = 0
                if let paced = query["paced"].flatMap(Int.init) {
                    // paced=K: groups of 1 … K messages, one write each, a little apart.
                    publishPaced(data, to: channel, count: max(count, 0), largestGroup: paced)
                    return (.ok, "publishing \(count) to \(channel), paced\n")
                } else if let each {
                    for index in 0..<max(each, 0) { sequence = try publish(data, to: channel + String(index)) }
                } else {
                    sequence = try publish(data, to: channel, count: max(count, 0))
                }
                return (.ok, "published \(channel)#\(sequence)\n")
            } catch {
                return (.badRequest, "not published: \(error)\n")
            }
        default:
            return (.notFound, "unknown path; try /admin/status\n")
        }
    }
}

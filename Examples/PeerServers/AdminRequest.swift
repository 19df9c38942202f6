import Foundation

/// One HTTP exchange with a helper process (a peer server's admin endpoint) over a plain socket
/// on a thread of its own: while the server works (a publish of 50,000 messages), waiting costs
/// this process no CPU — URLSession's curl polls meanwhile, which a benchmark that measures this
/// process's CPU time would count against the client it measures.
public enum AdminRequest {
    /// Why an exchange failed.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The status code and the body of `GET path` on 127.0.0.1:`port`.
    public static func get(port: Int, path: String) async throws -> (status: Int, body: String) {
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        let (response, _) = try await onThread { try exchange(port: port, request: request, headersOnly: false) }
        guard let headEnd = response.range(of: "\r\n\r\n"), let status = statusCode(response) else {
            throw Failure("admin: not an HTTP response: \(response.prefix(80))")
        }
        return (status, String(response[headEnd.upperBound...]))
    }

    /// How long the server at 127.0.0.1:`port` takes, on its own, from the TCP connect to the
    /// end of its answer to a WebSocket upgrade request (the connection is then dropped).
    public static func upgradeTime(port: Int, path: String, subprotocol: String?) async throws -> Duration {
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        if let subprotocol { request += "Sec-WebSocket-Protocol: \(subprotocol)\r\n" }
        let complete = request + "\r\n"
        let (response, elapsed) = try await onThread { try exchange(port: port, request: complete, headersOnly: true) }
        guard statusCode(response) == 101 else { throw Failure("no upgrade at 127.0.0.1:\(port)\(path): \(response.prefix(80))") }
        return elapsed
    }

    private static func statusCode(_ response: String) -> Int? {
        response.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) }
    }

    private static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }

    /// Connects, writes `request`, reads the answer (to its end, or to the end of its headers);
    /// the answer and the time from the connect.
    private static func exchange(port: Int, request: String, headersOnly: Bool) throws -> (String, Duration) {
        let start = ContinuousClock.now
        #if os(Linux)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure("no socket (errno \(errno))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure("cannot connect to 127.0.0.1:\(port) (errno \(errno))") }
        let bytes = Array(request.utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw Failure("send failed (errno \(errno))") }
            written += count
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { break }
            guard count > 0 else { throw Failure("read failed (errno \(errno))") }
            response += buffer[0..<count]
            if headersOnly, String(decoding: response, as: UTF8.self).contains("\r\n\r\n") { break }
        }
        return (String(decoding: response, as: UTF8.self), ContinuousClock.now - start)
    }
}

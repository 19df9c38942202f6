import Foundation

/// One GET on a helper process's admin endpoint, over a plain socket on a thread of its own:
/// while the server works (a publish of 50,000 messages), waiting costs this process no CPU —
/// URLSession's curl polls meanwhile, which a benchmark that measures this process's CPU time
/// would count against the client it measures.
enum AdminRequest {
    /// The status code and the body of `GET path` on 127.0.0.1:`port`.
    static func get(port: Int, path: String) async throws -> (status: Int, body: String) {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try blockingGet(port: port, path: path) })
            }
            thread.start()
        }
    }

    private static func blockingGet(port: Int, path: String) throws -> (status: Int, body: String) {
        #if os(Linux)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw BenchError("admin: no socket (errno \(errno))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw BenchError("admin: cannot connect to 127.0.0.1:\(port) (errno \(errno))") }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        var written = 0
        while written < request.count {
            let count = request[written...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw BenchError("admin: send failed (errno \(errno))") }
            written += count
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { break }
            guard count > 0 else { throw BenchError("admin: read failed (errno \(errno))") }
            response += buffer[0..<count]
        }
        let text = String(decoding: response, as: UTF8.self)
        guard let headEnd = text.range(of: "\r\n\r\n"), let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap({ Int($0) }) else {
            throw BenchError("admin: not an HTTP response: \(text.prefix(80))")
        }
        return (status, String(text[headEnd.upperBound...]))
    }
}

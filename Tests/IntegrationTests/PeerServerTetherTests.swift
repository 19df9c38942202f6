import Foundation
import PeerServers
import Testing

/// A peer server never outlives the process that started it: it runs tethered to that process's
/// end of its stdin (`Apps/tethered.py`), which the OS closes however the process ends.
@Suite("peer servers end with the process that started them", .timeLimit(.minutes(2)))
struct PeerServerTetherTests {
    @Test("a server whose parent lets go (as an exiting process does) ends itself, with its sockets open")
    func endsWhenReleased() async throws {
        let server = try await PeerServer.start(.graphQL)
        // An open socket is what keeps a SIGTERMed uvicorn waiting: the tether must not wait.
        let socket = try TCPProbe(port: server.port)
        defer { socket.close() }
        #expect(await !server.exited(within: .milliseconds(300)), "the server should run while its parent holds it")
        server.releaseTether()
        let ended = await server.exited(within: .seconds(20))
        #expect(ended, "the server outlived its tether")
        if !ended { await server.stop() }
    }
}

/// A plain TCP connection to a loopback port.
private struct TCPProbe {
    let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else {
            Glibc.close(fd)
            throw PeerServer.Unavailable(description: "could not connect to 127.0.0.1:\(port)")
        }
    }

    func close() {
        Glibc.close(fd)
    }
}

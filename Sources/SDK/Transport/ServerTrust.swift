#if canImport(Security)
public import Security
#endif

/// A server's TLS identity, handed to the app's trust evaluation
/// (``URLSessionWebSocketTransport/evaluateServerTrust``) to pin a certificate or a public key.
public struct ServerTrustChallenge {
    /// The server's host name.
    public let host: String
    /// The server's port.
    public let port: Int
    #if canImport(Security)
    /// The server's trust object: its certificate chain, to check with the Security framework
    /// (`SecTrustCopyCertificateChain`, `SecCertificateCopyKey`, …).
    public let serverTrust: SecTrust

    public init(host: String, port: Int, serverTrust: SecTrust) {
        self.host = host
        self.port = port
        self.serverTrust = serverTrust
    }
    #else
    /// A challenge from `host` on `port`: on platforms without Security (Linux) there is no `SecTrust`.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }
    #endif
}

/// One socket's trust evaluation: the app's decision, and what it refused (the open then fails
/// with ``TransportError/Code/serverUntrusted``). Without an evaluation every server is left to
/// the system's own.
final class ServerTrustGate: Sendable {
    private let decide: (@Sendable (ServerTrustChallenge) -> Bool)?
    private let refused = Locked<String?>(nil)

    init(_ decide: (@Sendable (ServerTrustChallenge) -> Bool)?) {
        self.decide = decide
    }

    /// The app's decision about `challenge`; a refusal is remembered.
    func evaluate(_ challenge: ServerTrustChallenge) -> Bool {
        guard let decide else { return true }
        let trusted = decide(challenge)
        if !trusted { refused.withLock { $0 = challenge.host } }
        return trusted
    }

    /// The host the evaluation refused, if it refused one.
    var refusedHost: String? { refused.withLock { $0 } }

    /// The error an open fails with when the evaluation refused `host`.
    static func refusal(of host: String) -> TransportError {
        TransportError(.serverUntrusted, "the app's server trust evaluation refused \(host): not retried")
    }
}

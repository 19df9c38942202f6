package import Foundation

/// How one attempt opens its socket.
package struct Handshake: Hashable, Sendable {
    package var url: URL
    package var headers: [String: String]
    /// The WebSocket subprotocols to offer, in preference order (the server must choose one).
    package var subprotocols: [String]
    /// Values that must never be shown: credentials the protocol put in the URL.
    package var secrets: [String]
    /// Whether the server must choose one of ``subprotocols`` (false: they are an offer, and a
    /// server that chooses none speaks the protocol's first version).
    package var requiresSubprotocol: Bool
    /// The subscriptions the request itself carries, in order (a protocol that can resume in its
    /// upgrade: Tether version 2), for the machine of the socket that opens.
    package var carried: [WireResume]
    /// How many of ``carried`` (the first) the server answers only if it says so when the socket
    /// opens (Tether version 3's resume set, which a server may no longer hold).
    package var tentativelyCarried: Int

    package init(
        url: URL, headers: [String: String] = [:], subprotocols: [String] = [], secrets: [String] = [],
        requiresSubprotocol: Bool = true, carried: [WireResume] = [], tentativelyCarried: Int = 0
    ) {
        self.url = url
        self.headers = headers
        self.subprotocols = subprotocols
        self.secrets = secrets
        self.requiresSubprotocol = requiresSubprotocol
        self.carried = carried
        self.tentativelyCarried = tentativelyCarried
    }

    /// `text` with every secret replaced by `<redacted>` (also percent-encoded, as a URL holds it).
    package func redacted(_ text: String) -> String {
        var text = text
        for secret in secrets where !secret.isEmpty {
            text = text.replacingOccurrences(of: secret, with: "<redacted>")
            if let encoded = secret.addingPercentEncoding(withAllowedCharacters: .urlUnreserved), encoded != secret {
                text = text.replacingOccurrences(of: encoded, with: "<redacted>")
            }
        }
        return text
    }

    /// `error` with every secret redacted from what it says.
    package func redacted(_ error: any Error) -> any Error {
        guard !secrets.isEmpty else { return error }
        if let error = error as? TransportError {
            return TransportError(error.code, redacted(error.message), httpStatus: error.httpStatus)
        }
        let text = String(describing: error)
        let clean = redacted(text)
        return clean == text ? error : TransportError(.connectionFailed, clean)
    }
}

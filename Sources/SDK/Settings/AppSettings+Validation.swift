import Foundation

extension AppSettings.Builder {
    /// A duration setting is 0 (where allowed) to 24 hours.
    static func check(_ duration: Duration, _ name: String, allowZero: Bool) throws(SettingsError) {
        let day = Duration.seconds(86_400)
        if duration < .zero || (!allowZero && duration == .zero) || duration > day {
            throw SettingsError(.invalidDuration, "\(name) must be \(allowZero ? "0" : "more than 0") to 24 hours (got \(duration))")
        }
    }

    static func validatedURL(_ text: String?, allowInsecure: Bool) throws(SettingsError) -> URL {
        guard let text, !text.isEmpty else { throw SettingsError(.missingURL, "call serverURL(_:) with the WebSocket endpoint") }
        guard let components = URLComponents(string: text), let url = components.url else {
            throw SettingsError(.invalidURL, "'\(Self.redactedURL(text))' is not a URL")
        }
        let scheme = components.scheme?.lowercased()
        guard scheme == "ws" || scheme == "wss" else {
            throw SettingsError(.invalidURL, "the URL scheme must be ws or wss (got \(scheme ?? "none"))")
        }
        guard let host = components.host, !host.isEmpty else {
            throw SettingsError(.invalidURL, "the URL has no host")
        }
        if components.user != nil || components.password != nil || components.query != nil {
            throw SettingsError(.invalidURL, "credentials and query strings do not belong in the URL (it ends up in logs); use token(_:)")
        }
        if let port = components.port, !(1...65535).contains(port) {
            throw SettingsError(.invalidURL, "port \(port) is out of range")
        }
        if scheme == "ws", !allowInsecure, !isLoopback(host) {
            throw SettingsError(.insecureTransport, "ws:// to \(host) is not encrypted; use wss:// or allowInsecureTransport(true)")
        }
        return url
    }

    static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// The scheme and host of a URL that may not parse, and nothing else: no user or password
    /// (before an `@`), no path, query or fragment (where tokens live).
    static func redactedURL(_ text: String) -> String {
        let schemeEnd = text.range(of: "://")
        let scheme = schemeEnd.map { String(text[..<$0.lowerBound]) + "://" } ?? ""
        let rest = schemeEnd.map { text[$0.upperBound...] } ?? text[...]
        let authority = rest.prefix { !"/?#".contains($0) }
        let host = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
        return String((scheme + host).prefix(80))
    }
}

import ConnectionPolicy
import Foundation

/// A WebSocket close code. What a code means for retrying is each protocol's to say (the
/// 4xxx constants below are Tether's, `docs/PROTOCOL.md`; graphql-transport-ws gives 4429 another
/// meaning): see <doc:BackendProtocols>.
public struct CloseCode: Hashable, Sendable, CustomStringConvertible {
    /// The code's number.
    public let rawValue: UInt16

    /// A close code by its number (RFC 6455 §7.4).
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    /// 1000: the connection did what it was for.
    public static let normal = CloseCode(1000)
    /// 1001: the server is going down, or the client is leaving.
    public static let goingAway = CloseCode(1001)
    /// 1002: a WebSocket protocol error.
    public static let protocolError = CloseCode(1002)
    /// 1006: the connection ended without a close frame (never sent on the wire).
    public static let abnormal = CloseCode(1006)
    /// 1009: a frame was larger than the receiver accepts.
    public static let messageTooBig = CloseCode(1009)
    /// 1011: the server hit an unexpected condition.
    public static let internalError = CloseCode(1011)
    /// 4000: a passing failure; retry with backoff.
    public static let transient = CloseCode(4000)
    /// 4001: the credentials were rejected; do not retry until there are new ones.
    public static let unauthorized = CloseCode(4001)
    /// 4003: the client may not use this server; do not retry.
    public static let forbidden = CloseCode(4003)
    /// 4008: the client read too slowly and the server would not queue more for it; retry
    /// (with backoff) and catch up by sequence.
    public static let slowConsumer = CloseCode(4008)
    /// 4408: the client did not authenticate in time after the upgrade; retry with backoff.
    public static let authenticationTimeout = CloseCode(4408)
    /// 4400: the client broke the protocol (a bug: retrying would only repeat it).
    public static let badRequest = CloseCode(4400)
    /// 4429: try again later; the close reason holds the delay as `retry-after-ms=N`.
    public static let retryAfter = CloseCode(4429)

    public var description: String { String(rawValue) }

    /// Indicates that an endpoint may put the code in a close frame (RFC 6455 §7.4): 1000–1003,
    /// 1007–1014, and 3000–4999. 1004, 1005, 1006 and 1015 are reserved or mean "no frame";
    /// below 1000, 1016–2999 and from 5000 up are not codes at all.
    public var mayBeSent: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    /// The close reason a server sends with ``retryAfter``.
    public static func retryAfterReason(_ delay: Duration) -> String {
        let (seconds, attoseconds) = delay.components
        return "retry-after-ms=\(seconds * 1000 + attoseconds / 1_000_000_000_000_000)"
    }

    /// The delay in a `retry-after-ms=N` close reason, if it holds one.
    public static func retryAfterMilliseconds(in reason: String) -> Int64? {
        guard let range = reason.range(of: "retry-after-ms=") else { return nil }
        let digits = reason[range.upperBound...].prefix { $0.isNumber }
        guard let value = Int64(digits), value >= 0, value <= 86_400_000 else { return nil }
        return value
    }
}

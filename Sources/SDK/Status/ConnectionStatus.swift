public import ConnectionPolicy

/// Where the session's connection is.
///
/// These four cases are all there will be: a `switch` over them needs no `default`. What is
/// new in a later release (a new way to lose or refuse a connection) comes as a new
/// `DisconnectReason` code, which is the struct that grows.
@frozen
public enum ConnectionStatus: Hashable, Sendable, CustomStringConvertible {
    /// Not connected, and not trying: the reason says why (the app's request, the background,
    /// the watchdog, rejected credentials, …). Something must change before it connects again.
    case disconnected(DisconnectReason)
    /// An attempt is in flight (the socket is opening, or authenticating).
    case connecting
    /// Connected and authenticated.
    case connected
    /// The connection was lost for this reason and the session will try again (after the
    /// backoff, or once the network is back).
    case reconnecting(DisconnectReason)

    /// Indicates `connected`.
    public var isConnected: Bool { self == .connected }

    /// The reason, when disconnected or reconnecting.
    public var reason: DisconnectReason? {
        switch self {
        case .disconnected(let reason), .reconnecting(let reason): reason
        case .connecting, .connected: nil
        }
    }

    public var description: String {
        switch self {
        case .disconnected(let reason): "disconnected (\(reason))"
        case .connecting: "connecting"
        case .connected: "connected"
        case .reconnecting(let reason): "reconnecting (after \(reason))"
        }
    }
}

/// How a session on Tether's protocol opens a connection and recovers on it
/// (``ServerProtocol/tether(handshake:)``; `docs/PROTOCOL.md`). Whatever the choice, the
/// credentials never go in the URL.
///
/// An input you choose; a later release may add a way, so a `switch` over it needs a `default`.
public enum TetherHandshake: Hashable, Sendable {
    /// Versions 3 and 2 offered (subprotocols `tether.v3`, `tether.v2`): the credentials in the
    /// `Authorization` header and the subscriptions with their `since` in the upgrade request, so
    /// the server answers with the acknowledgements and the catch-up right after the 101 — one
    /// round trip after the upgrade's TCP. On version 3 the server keeps each connection's
    /// subscriptions under a token, and the next upgrade names them by it with only their
    /// positions (thousands fit); otherwise they go by name in `Tether-Resume` (a list longer than
    /// 4 KiB goes in frames right after the 101). A token that cannot be a header value, or a
    /// server that chooses neither, gets ``pipelined``. The default.
    case resumeInUpgrade
    /// Version 1: `auth`, then the resubscribes and the outbox's publishes in the same flight,
    /// without waiting for `auth`'s `ok` (the server handles a connection's frames in order and
    /// applies none behind rejected credentials).
    case pipelined
    /// Version 1, the replay after `auth`'s `ok`: one more round trip. For a server that does not
    /// handle a connection's frames in order.
    case afterAuthentication
}

public import Foundation

/// One WebSocket message.
///
/// A WebSocket message is text or binary; these two cases are all there will be.
@frozen
public enum TransportFrame: Hashable, Sendable {
    /// A text message (UTF-8).
    case text(String)
    /// A binary message.
    case binary([UInt8])

    /// The payload's size in bytes.
    package var byteCount: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .binary(let bytes): bytes.count
        }
    }
}

/// What a connection reports, in order. After `closed` nothing more comes and the stream ends.
///
/// A WebSocket delivers messages and then ends; these two cases are all there will be.
@frozen
public enum TransportEvent: Hashable, Sendable {
    /// A message arrived.
    case frame(TransportFrame)
    /// The connection ended: a close frame with its code and reason, or `nil` when it ended
    /// without one (reset, end of stream, a transport error described by `reason`).
    case closed(code: CloseCode?, reason: String)
}

/// Opens WebSocket connections. The session holds at most one connection at a time and closes
/// every connection it opened; a transport may refuse a second concurrent one.
public protocol Transport: Sendable {
    /// Opens a connection to `url` with extra upgrade headers. Throws a ``TransportError`` when
    /// it cannot (a refused upgrade: ``TransportError/Code/handshakeFailed`` with the response's
    /// ``TransportError/httpStatus``); honours task cancellation.
    ///
    /// The upgrade request must carry `url`'s path **and query** unchanged: protocols put what
    /// the server needs there (Socket.IO's `EIO=4&transport=websocket`, Phoenix's `vsn`, a token
    /// sent as a query item). A transport that drops the query makes a Socket.IO server refuse
    /// the upgrade with 403, which reads as rejected credentials.
    func open(url: URL, headers: [String: String]) async throws -> any TransportConnection

    /// Opens a connection offering `subprotocols` (`Sec-WebSocket-Protocol`, in preference
    /// order); the connection's ``TransportConnection/subprotocol`` is the one the server chose.
    /// A server that chooses one it was not offered fails the handshake (RFC 6455 §4.1).
    func open(url: URL, headers: [String: String], subprotocols: [String]) async throws -> any TransportConnection
}

extension Transport {
    /// A transport that cannot offer subprotocols opens without them, and refuses when asked
    /// for some.
    public func open(url: URL, headers: [String: String], subprotocols: [String]) async throws -> any TransportConnection {
        guard subprotocols.isEmpty else { throw TransportError(.unavailable, "this transport cannot offer WebSocket subprotocols") }
        return try await open(url: url, headers: headers)
    }
}

/// One open WebSocket connection.
///
/// `events` has one reader (the session). A connection that ends other than by
/// `close(code:reason:)` delivers `.closed` — the peer's close code and reason, or `nil` and what
/// happened (the socket ended, the peer broke the WebSocket rules) — and then `events` ends;
/// `send` throws ``TransportError`` with `notConnected` from then on, and the session waits for
/// that `.closed` to learn why. `close(code:reason:)` ends `events` too, so the reader never
/// waits on a connection that was closed.
public protocol TransportConnection: Sendable {
    /// What arrives, in order.
    var events: AsyncStream<TransportEvent> { get }
    /// Sends one frame. Throws ``TransportError`` once the connection is closed.
    func send(_ frame: TransportFrame) async throws
    /// Sends frames in order, as one write where the transport can (a replay of a hundred
    /// subscriptions goes out in one flight). Default: one ``send(_:)`` after another.
    func send(contentsOf frames: [TransportFrame]) async throws
    /// Sends a close frame and releases the connection. Safe to call more than once.
    func close(code: CloseCode, reason: String) async
    /// The subprotocol the server chose (`nil`: none).
    var subprotocol: String? { get }
}

/// A connection that hands over what arrived in one read as one batch, in order, through its
/// ``reads`` outlet: the session attaches to it directly, so a read reaches the session's funnel
/// from the transport's own thread, with no task in between, and a burst of frames costs one
/// wake-up, not one per frame. (A consumer reads the outlet or ``TransportConnection/events``,
/// never both.) The reader says what it took (``BatchOutlet/taken(_:)``): a transport that stops
/// reading from its socket while what it handed over waits (TCP's own flow control then holds
/// the server back) reads on; that bounds what waits in the session's funnel.
package protocol EventBatchingConnection: TransportConnection {
    var reads: BatchOutlet { get }
}

extension EventBatchingConnection {
    /// The reads as a stream, for a reader task (the benchmark's clients).
    package var eventBatches: AsyncStream<[TransportEvent]> { reads.stream() }
}

extension [TransportEvent] {
    /// The bytes of the frames among these events.
    package var frameBytes: Int {
        reduce(0) { total, event in
            if case .frame(let frame) = event { total + frame.byteCount } else { total }
        }
    }
}

extension TransportConnection {
    public var subprotocol: String? { nil }

    public func send(contentsOf frames: [TransportFrame]) async throws {
        for frame in frames { try await send(frame) }
    }
}

/// Why a transport could not open or use a connection.
public struct TransportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure. New codes may be added; `switch` with a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Wrapped: String, Hashable, Sendable {
            case unavailable, invalidURL, connectionFailed, handshakeFailed, notConnected, alreadyConnected, frameTooLarge, serverUntrusted
        }

        let wrapped: Wrapped

        /// This transport cannot work here (for instance `URLSessionWebSocketTask` on Linux).
        public static let unavailable = Code(wrapped: .unavailable)
        /// The URL is not one the transport can open.
        public static let invalidURL = Code(wrapped: .invalidURL)
        /// The connection could not be made (refused, unreachable, reset, timed out).
        public static let connectionFailed = Code(wrapped: .connectionFailed)
        /// The server did not accept the WebSocket upgrade.
        public static let handshakeFailed = Code(wrapped: .handshakeFailed)
        /// The connection is closed.
        public static let notConnected = Code(wrapped: .notConnected)
        /// A second connection was asked for while one is open (a bug the test transport catches).
        public static let alreadyConnected = Code(wrapped: .alreadyConnected)
        /// A frame was larger than the transport accepts.
        public static let frameTooLarge = Code(wrapped: .frameTooLarge)
        /// The app's evaluation of the server's trust (certificate or public-key pinning)
        /// refused the server: never retried, the same server would be refused again.
        public static let serverUntrusted = Code(wrapped: .serverUntrusted)

        public var description: String { wrapped.rawValue }
    }

    /// What kind of failure: `switch` over it with a `default`.
    public let code: Code
    /// What happened, in words.
    public let message: String
    /// For a refused upgrade: the HTTP status the server answered (403, 404, 503, …).
    public let httpStatus: Int?

    /// An error with its code, its message, and the HTTP status of a refused upgrade.
    public init(_ code: Code, _ message: String, httpStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
    }

    public var description: String { "\(code): \(message)" + (httpStatus.map { " (HTTP \($0))" } ?? "") }
}

import Foundation
import SDK
import Testing

/// A transport through which a test plays the server of any protocol, frame by frame: it sees
/// every open (URL and offered subprotocols), every frame the session sends and every close, in
/// order, on ``log``; it pushes frames and closes with ``push(_:)`` and ``closeFromServer(_:)``.
final class ScriptedTransport: Transport {
    enum Event: Hashable, Sendable {
        case opened(URL, subprotocols: [String])
        case sent(String)
        case sentBinary([UInt8])
        case closed(CloseCode)
    }

    /// Everything the session did with the transport, in order.
    let log: AsyncStream<Event>
    private let logSink: AsyncStream<Event>.Continuation
    private let chosenSubprotocol: String?
    private let refusals: Locked<[TransportError]>
    /// When set, a client's close is written only once it fires (a slow network at the end).
    private let closeGate: OneShot?
    private let current = Locked<AsyncStream<TransportEvent>.Continuation?>(nil)
    private let opens = Locked(0)
    private let sent = Locked(0)
    /// Called with each text frame as it is sent, before the log has it.
    private let onSend: (@Sendable (String) -> Void)?

    /// How many frames the session sent, on every socket.
    var sentCount: Int { sent.withLock { $0 } }

    /// How many times a socket was asked to open (refused ones included).
    var openCount: Int { opens.withLock { $0 } }

    /// - Parameters:
    ///   - subprotocol: the subprotocol the "server" chooses.
    ///   - refusals: errors the next opens fail with, in order.
    init(subprotocol: String? = nil, refusals: [TransportError] = [], closeGate: OneShot? = nil, onSend: (@Sendable (String) -> Void)? = nil) {
        (log, logSink) = AsyncStream<Event>.makeStream()
        self.onSend = onSend
        chosenSubprotocol = subprotocol
        self.refusals = Locked(refusals)
        self.closeGate = closeGate
    }

    func open(url: URL, headers: [String: String]) async throws -> any TransportConnection {
        try await open(url: url, headers: headers, subprotocols: [])
    }

    func open(url: URL, headers: [String: String], subprotocols: [String]) async throws -> any TransportConnection {
        opens.withLock { $0 += 1 }
        logSink.yield(.opened(url, subprotocols: subprotocols))
        if let refusal = refusals.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { throw refusal }
        let (events, continuation) = AsyncStream<TransportEvent>.makeStream()
        current.withLock { $0 = continuation }
        return Connection(events: events, continuation: continuation, subprotocol: chosenSubprotocol, log: logSink, closeGate: closeGate, sent: sent, onSend: onSend)
    }

    /// The server sends a text frame on the open connection.
    func push(_ text: String) {
        _ = current.withLock { $0?.yield(.frame(.text(text))) }
    }

    /// The server sends a binary frame on the open connection.
    func push(binary bytes: [UInt8]) {
        _ = current.withLock { $0?.yield(.frame(.binary(bytes))) }
    }

    /// The server closes the open connection (`nil`: it vanishes without a close frame).
    func closeFromServer(_ code: CloseCode?, reason: String = "") {
        current.withLock { continuation in
            continuation?.yield(.closed(code: code, reason: reason))
            continuation?.finish()
            continuation = nil
        }
    }

    private final class Connection: TransportConnection {
        let events: AsyncStream<TransportEvent>
        let subprotocol: String?
        private let continuation: AsyncStream<TransportEvent>.Continuation
        private let log: AsyncStream<Event>.Continuation
        private let isClosed = Locked(false)
        private let closeGate: OneShot?
        private let sent: Locked<Int>
        private let onSend: (@Sendable (String) -> Void)?

        init(
            events: AsyncStream<TransportEvent>, continuation: AsyncStream<TransportEvent>.Continuation, subprotocol: String?,
            log: AsyncStream<Event>.Continuation, closeGate: OneShot?, sent: Locked<Int>, onSend: (@Sendable (String) -> Void)?
        ) {
            self.sent = sent
            self.onSend = onSend
            self.events = events
            self.continuation = continuation
            self.subprotocol = subprotocol
            self.log = log
            self.closeGate = closeGate
        }

        func send(_ frame: TransportFrame) async throws {
            guard !isClosed.withLock({ $0 }) else { throw TransportError(.notConnected, "closed") }
            sent.withLock { $0 += 1 }
            switch frame {
            case .text(let text):
                onSend?(text)
                log.yield(.sent(text))
            case .binary(let bytes): log.yield(.sentBinary(bytes))
            }
        }

        func close(code: CloseCode, reason: String) async {
            let first = isClosed.withLock { closed in
                defer { closed = true }
                return !closed
            }
            guard first else { return }
            await closeGate?.wait()
            log.yield(.closed(code))
            continuation.yield(.closed(code: code, reason: reason))
            continuation.finish()
        }
    }
}

/// Reads a ``ScriptedTransport``'s log in order.
struct ScriptedLog {
    private let reader: PatientReader<ScriptedTransport.Event>

    init(_ transport: ScriptedTransport) { reader = PatientReader(transport.log) }

    /// The next event; `nil` when the log ended, or (an issue recorded) when nothing came for
    /// 10 s of real time.
    func next(sourceLocation: SourceLocation = #_sourceLocation) async -> ScriptedTransport.Event? {
        await reader.next(sourceLocation: sourceLocation)
    }

    /// The next frame the session sent (opens and closes on the way are returned in `skipped`).
    func nextSent(
        skipped: inout [ScriptedTransport.Event], sourceLocation: SourceLocation = #_sourceLocation
    ) async -> String? {
        while let event = await next(sourceLocation: sourceLocation) {
            if case .sent(let text) = event { return text }
            skipped.append(event)
        }
        return nil
    }

    func nextSent(sourceLocation: SourceLocation = #_sourceLocation) async -> String? {
        var skipped: [ScriptedTransport.Event] = []
        return await nextSent(skipped: &skipped, sourceLocation: sourceLocation)
    }

    /// The next binary frame the session sent (opens and closes on the way are returned in
    /// `skipped`).
    func nextBinary(
        skipped: inout [ScriptedTransport.Event], sourceLocation: SourceLocation = #_sourceLocation
    ) async -> [UInt8]? {
        while let event = await next(sourceLocation: sourceLocation) {
            if case .sentBinary(let bytes) = event { return bytes }
            skipped.append(event)
        }
        return nil
    }
}

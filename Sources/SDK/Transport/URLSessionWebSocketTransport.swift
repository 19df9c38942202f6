public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// The transport on `URLSessionWebSocketTask`, for Apple platforms.
///
/// The one implementation compiles on Apple platforms and, against FoundationNetworking's
/// `URLSessionWebSocketTask`, on Linux. Where the system's libcurl (which swift-corelibs-foundation
/// uses) has no ws/wss support, `open` throws ``TransportError/Code/unavailable`` — a check made
/// at run time, when the task fails with `NSURLErrorUnsupportedURL`. Use a swift-nio transport
/// there (the package's `Examples/NIOTransport`).
public struct URLSessionWebSocketTransport: Transport {
    /// The largest message accepted.
    public var maximumMessageSize: Int
    /// Decides whether to trust a server (certificate or public-key pinning): `false` refuses
    /// it, and the open fails with ``TransportError/Code/serverUntrusted`` (never retried).
    /// `true` leaves the system's own evaluation to run as usual: pinning adds to it.
    public var evaluateServerTrust: (@Sendable (ServerTrustChallenge) -> Bool)?
    private let configurationBox: ConfigurationBox

    /// `@unchecked Sendable`: the configuration is copied when the transport is made, and only
    /// copied again afterwards (for each socket's `URLSession`, and for ``configuration``);
    /// nothing mutates the copy held here.
    private struct ConfigurationBox: @unchecked Sendable {
        let value: URLSessionConfiguration
    }

    /// - Parameters:
    ///   - maximumMessageSize: the largest message accepted (default 1 MiB).
    ///   - configuration: the app's `URLSessionConfiguration` (copied): proxies, timeouts,
    ///     `waitsForConnectivity`, and on Apple platforms `allowsConstrainedNetworkAccess` and
    ///     `allowsExpensiveNetworkAccess`. Each socket gets a session of its own made from it.
    ///   - evaluateServerTrust: see ``evaluateServerTrust``.
    public init(
        maximumMessageSize: Int = 1 << 20, configuration: URLSessionConfiguration = .ephemeral,
        evaluateServerTrust: (@Sendable (ServerTrustChallenge) -> Bool)? = nil
    ) {
        self.maximumMessageSize = maximumMessageSize
        self.configurationBox = ConfigurationBox(value: Self.copy(of: configuration))
        self.evaluateServerTrust = evaluateServerTrust
    }

    /// A copy of the configuration each socket's session is made from.
    public var configuration: URLSessionConfiguration { Self.copy(of: configurationBox.value) }

    private static func copy(of configuration: URLSessionConfiguration) -> URLSessionConfiguration {
        (configuration.copy() as? URLSessionConfiguration) ?? .ephemeral
    }

    public func open(url: URL, headers: [String: String]) async throws -> any TransportConnection {
        try await open(url: url, headers: headers, subprotocols: [])
    }

    public func open(url: URL, headers: [String: String], subprotocols: [String]) async throws -> any TransportConnection {
        #if canImport(Darwin) || canImport(FoundationNetworking)
        var request = URLRequest(url: url)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if !subprotocols.isEmpty { request.setValue(subprotocols.joined(separator: ", "), forHTTPHeaderField: "Sec-WebSocket-Protocol") }
        let delegate = WebSocketTaskDelegate(trust: ServerTrustGate(evaluateServerTrust))
        let session = makeSession(delegate: delegate)
        let task = session.webSocketTask(with: request)
        task.maximumMessageSize = maximumMessageSize
        task.resume()
        do {
            try await delegate.waitUntilOpen()
        } catch {
            let status = (task.response as? HTTPURLResponse)?.statusCode
            task.cancel(with: .abnormalClosure, reason: nil)
            session.invalidateAndCancel()
            if let refused = delegate.trust.refusedHost {
                throw ServerTrustGate.refusal(of: refused)
            }
            if Self.isUnsupportedScheme(error) {
                throw TransportError(.unavailable, Self.unavailableMessage)
            }
            if let status, status != 101 {
                throw TransportError(.handshakeFailed, "the server did not upgrade to WebSocket: HTTP \(status)", httpStatus: status)
            }
            throw TransportError(.connectionFailed, "could not open the WebSocket: \(error.localizedDescription)")
        }
        let chosen = delegate.subprotocol.withLock { $0 }
        if let chosen, !subprotocols.contains(chosen) {
            task.cancel(with: .protocolError, reason: nil)
            session.invalidateAndCancel()
            throw TransportError(.handshakeFailed, "the server chose the subprotocol '\(chosen.prefix(60))', which was not offered")
        }
        return URLSessionWebSocketConnection(task: task, session: session, delegate: delegate, subprotocol: chosen)
        #else
        throw TransportError(.unavailable, Self.unavailableMessage)
        #endif
    }

    #if canImport(Darwin) || canImport(FoundationNetworking)
    /// A socket's session: the app's configuration (copied), `delegate` answering its events.
    package func makeSession(delegate: (any URLSessionDelegate)?) -> URLSession {
        URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }
    #endif

    package static let unavailableMessage =
        "URLSessionWebSocketTask cannot open ws/wss URLs in this Foundation (the system libcurl has no WebSocket support); use a swift-nio transport on Linux"

    /// The task failed because this Foundation cannot open the URL's scheme at all (Linux's
    /// libcurl built without WebSocket support reports `NSURLErrorUnsupportedURL`).
    package static func isUnsupportedScheme(_ error: any Error) -> Bool {
        let error = error as NSError
        return error.domain == NSURLErrorDomain && error.code == NSURLErrorUnsupportedURL
    }
}

#if canImport(Darwin) || canImport(FoundationNetworking)
/// Reports the open and the close of one task.
final class WebSocketTaskDelegate: NSObject, URLSessionWebSocketDelegate, Sendable {
    /// The app's trust evaluation, and whether it refused the server.
    let trust: ServerTrustGate

    init(trust: ServerTrustGate) {
        self.trust = trust
    }

    private enum Open {
        case waiting(CheckedContinuation<Void, any Error>?)
        case opened
        case failed(any Error)
    }

    private let open = Locked<Open>(.waiting(nil))
    /// The subprotocol the server chose, once open.
    let subprotocol = Locked<String?>(nil)
    /// How the connection ended, once it has; `ended` fires then.
    let endEvent = Locked<TransportEvent?>(nil)
    let ended = OneShot()

    func waitUntilOpen() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let result: Result<Void, any Error>? = open.withLock { state in
                switch state {
                case .waiting: state = .waiting(continuation); return nil
                case .opened: return .success(())
                case .failed(let error): return .failure(error)
                }
            }
            if let result { continuation.resume(with: result) }
        }
    }

    private func settle(_ result: Result<Void, any Error>) {
        let waiter: CheckedContinuation<Void, any Error>? = open.withLock { state in
            guard case .waiting(let waiter) = state else { return nil }
            switch result {
            case .success: state = .opened
            case .failure(let error): state = .failed(error)
            }
            return waiter
        }
        waiter?.resume(with: result)
    }

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?) {
        subprotocol.withLock { $0 = `protocol` }
        settle(.success(()))
    }

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) {
        let text = reason.flatMap { String(data: $0, encoding: .utf8) } ?? ""
        end(.closed(code: CloseCode(UInt16(clamping: closeCode.rawValue)), reason: text))
    }

    private func end(_ event: TransportEvent) {
        endEvent.withLock { if $0 == nil { $0 = event } }
        ended.fire()
    }

    #if canImport(Darwin)
    /// A server trust challenge goes to the app's evaluation (when it gave one): refused, the
    /// challenge is cancelled and the open fails with ``TransportError/Code/serverUntrusted``;
    /// accepted, the system evaluates the server as usual. Apple platforms only: Linux's
    /// Foundation leaves TLS to libcurl and asks no delegate.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let space = challenge.protectionSpace
        guard space.authenticationMethod == NSURLAuthenticationMethodServerTrust, let serverTrust = space.serverTrust else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        let trusted = trust.evaluate(ServerTrustChallenge(host: space.host, port: space.port, serverTrust: serverTrust))
        completionHandler(trusted ? .performDefaultHandling : .cancelAuthenticationChallenge, nil)
    }
    #endif

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        settle(.failure(error ?? TransportError(.connectionFailed, "the connection ended before it opened")))
        end(.closed(code: nil, reason: error?.localizedDescription ?? "connection closed"))
    }
}

/// One open `URLSessionWebSocketTask`. Its messages are read by `events`' own reader (the
/// session), one `receive()` at a time.
final class URLSessionWebSocketConnection: TransportConnection {
    let events: AsyncStream<TransportEvent>
    let subprotocol: String?
    private let task: URLSessionWebSocketTask
    private let session: URLSession

    init(task: URLSessionWebSocketTask, session: URLSession, delegate: WebSocketTaskDelegate, subprotocol: String?) {
        self.task = task
        self.session = session
        self.subprotocol = subprotocol
        let isDone = Locked(false)
        // Messages are pulled by the reader: each `receive()` runs in the reader's task. After
        // the close event the stream ends.
        self.events = AsyncStream(unfolding: { [task, delegate] in
            guard !isDone.withLock({ $0 }) else { return nil }
            do {
                switch try await task.receive() {
                case .string(let text): return .frame(.text(text))
                case .data(let data): return .frame(.binary(Array(data)))
                @unknown default: return .frame(.binary([]))
                }
            } catch {
                isDone.withLock { $0 = true }
                await delegate.ended.wait()
                return delegate.endEvent.withLock { $0 } ?? .closed(code: nil, reason: error.localizedDescription)
            }
        })
    }

    func send(_ frame: TransportFrame) async throws {
        do {
            switch frame {
            case .text(let text): try await task.send(.string(text))
            case .binary(let bytes): try await task.send(.data(Data(bytes)))
            }
        } catch {
            // Make sure the connection really ends, so the receive loop delivers `.closed` with
            // the reason (the session waits for it after a `notConnected` send).
            task.cancel()
            throw TransportError(.notConnected, "send failed: \(error.localizedDescription)")
        }
    }

    func close(code: CloseCode, reason: String) async {
        task.cancel(with: URLSessionWebSocketTask.CloseCode(rawValue: Int(code.rawValue)) ?? .normalClosure, reason: Data(reason.utf8))
        session.finishTasksAndInvalidate()
    }
}
#endif

// Compiled into the SDK module by .ci/apple-compile (never by the package): the delegate
// methods Apple's Foundation calls on the SDK's WebSocketTaskDelegate, each with the signature
// the page gives. Apple's protocols declare them `optional`, so a method whose label or type
// drifts would silently never be called; conforming to this protocol makes the drift an error
// (the stubbed delegate protocols have no requirements and no defaults: only the class's own
// methods can satisfy it).
#if canImport(Darwin)
import Foundation

protocol AppleURLSessionDelegateRequirements {
    // https://developer.apple.com/documentation/foundation/urlsessiontaskdelegate/urlsession(_:task:didreceive:completionhandler:)
    // `optional func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge, completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void)`
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    )

    // https://developer.apple.com/documentation/foundation/urlsessionwebsocketdelegate/urlsession(_:websockettask:didopenwithprotocol:)
    // `optional func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?)`
    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?)

    // https://developer.apple.com/documentation/foundation/urlsessionwebsocketdelegate/urlsession(_:websockettask:didclosewith:reason:)
    // `optional func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?)`
    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?)

    // https://developer.apple.com/documentation/foundation/urlsessiontaskdelegate/urlsession(_:task:didcompletewitherror:)
    // `optional func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?)`
    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?)
}

extension WebSocketTaskDelegate: AppleURLSessionDelegateRequirements {}
#endif

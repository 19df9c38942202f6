// Apple's Foundation has these; swift-corelibs-foundation (this machine's) does not. Imported
// implicitly by .ci/apple-compile, as they would be by `import Foundation` on an Apple platform.
public import Foundation
public import Security

extension ProcessInfo {
    // https://developer.apple.com/documentation/foundation/processinfo/islowpowermodeenabled
    // `var isLowPowerModeEnabled: Bool { get }`
    public var isLowPowerModeEnabled: Bool { false }
}

extension ProcessInfo {
    // https://developer.apple.com/documentation/foundation/processinfo/thermalstate-swift.enum
    // `enum ThermalState` — nominal, fair, serious, critical (an NS_ENUM: a switch needs `@unknown default`)
    public enum ThermalState: Int, Sendable {
        case nominal, fair, serious, critical
    }

    // https://developer.apple.com/documentation/foundation/processinfo/thermalstate-swift.property
    // `var thermalState: ProcessInfo.ThermalState { get }`
    public var thermalState: ProcessInfo.ThermalState { .nominal }

    // https://developer.apple.com/documentation/foundation/processinfo/thermalstatedidchangenotification
    // `class let thermalStateDidChangeNotification: NSNotification.Name`
    public static let thermalStateDidChangeNotification = NSNotification.Name("NSProcessInfoThermalStateDidChangeNotification")
}

extension Notification.Name {
    // https://developer.apple.com/documentation/foundation/nsnotification/name-swift.struct/nsprocessinfopowerstatedidchange
    // `static let NSProcessInfoPowerStateDidChange: NSNotification.Name`
    public static let NSProcessInfoPowerStateDidChange = Notification.Name("NSProcessInfoPowerStateDidChangeNotification")
}

// Declared by this machine's Foundation already, with Apple's shape (so not stubbed here):
// `URLResourceValues.isExcludedFromBackup`, `FileAttributeKey.protectionKey`,
// `FileProtectionType.completeUntilFirstUserAuthentication`.
// `URLAuthenticationChallenge`.

// https://developer.apple.com/documentation/foundation/nsurlauthenticationmethodservertrust
// `let NSURLAuthenticationMethodServerTrust: String` (this machine's is marked unavailable)
public let NSURLAuthenticationMethodServerTrust: String = "NSURLAuthenticationMethodServerTrust"

// MARK: The URL loading system: Foundation's on Apple platforms (this machine keeps it in
// FoundationNetworking, which the Apple shapes hide). Apple's delegate protocols are Objective-C
// protocols whose methods are all `optional`; Swift on Linux cannot declare `optional`, so they
// are declared here with no requirements, and DelegateRequirements.swift checks the SDK's
// delegate methods against the pages' signatures.

// https://developer.apple.com/documentation/foundation/urlrequest
// `struct URLRequest` — `init(url: URL, cachePolicy: … = .useProtocolCachePolicy, timeoutInterval: TimeInterval = 60.0)`,
// `mutating func setValue(_ value: String?, forHTTPHeaderField field: String)`
public struct URLRequest: Sendable {
    public init(url: URL) {}
    public mutating func setValue(_ value: String?, forHTTPHeaderField field: String) {}
}

// https://developer.apple.com/documentation/foundation/urlresponse
// `class URLResponse : NSObject` (Sendable)
open class URLResponse: NSObject, @unchecked Sendable {}

// https://developer.apple.com/documentation/foundation/httpurlresponse
// `class HTTPURLResponse : URLResponse` — `var statusCode: Int { get }`
open class HTTPURLResponse: URLResponse, @unchecked Sendable {
    open var statusCode: Int { 0 }
}

// https://developer.apple.com/documentation/foundation/urlsessionconfiguration
// `class URLSessionConfiguration : NSObject, NSCopying` — `class var ephemeral: URLSessionConfiguration { get }`
open class URLSessionConfiguration: NSObject, NSCopying, @unchecked Sendable {
    open class var ephemeral: URLSessionConfiguration { URLSessionConfiguration() }
    public func copy(with zone: NSZone? = nil) -> Any { self }
}

// https://developer.apple.com/documentation/foundation/urlsessiondelegate
// `protocol URLSessionDelegate : NSObjectProtocol, Sendable`
public protocol URLSessionDelegate: NSObjectProtocol, Sendable {}
// https://developer.apple.com/documentation/foundation/urlsessiontaskdelegate
// `protocol URLSessionTaskDelegate : URLSessionDelegate`
public protocol URLSessionTaskDelegate: URLSessionDelegate {}
// https://developer.apple.com/documentation/foundation/urlsessionwebsocketdelegate
// `protocol URLSessionWebSocketDelegate : URLSessionTaskDelegate`
public protocol URLSessionWebSocketDelegate: URLSessionTaskDelegate {}

// https://developer.apple.com/documentation/foundation/urlsession
// `class URLSession : NSObject` (Sendable)
open class URLSession: NSObject, @unchecked Sendable {
    // https://developer.apple.com/documentation/foundation/urlsession/init(configuration:delegate:delegatequeue:)
    // `init(configuration: URLSessionConfiguration, delegate: (any URLSessionDelegate)?, delegateQueue queue: OperationQueue?)`
    public init(configuration: URLSessionConfiguration, delegate: (any URLSessionDelegate)?, delegateQueue queue: OperationQueue?) {}

    // https://developer.apple.com/documentation/foundation/urlsession/websockettask(with:)-9rupu
    // `func webSocketTask(with request: URLRequest) -> URLSessionWebSocketTask`
    open func webSocketTask(with request: URLRequest) -> URLSessionWebSocketTask { URLSessionWebSocketTask() }

    // https://developer.apple.com/documentation/foundation/urlsession/invalidateandcancel()
    // `func invalidateAndCancel()`
    open func invalidateAndCancel() {}

    // https://developer.apple.com/documentation/foundation/urlsession/finishtasksandinvalidate()
    // `func finishTasksAndInvalidate()`
    open func finishTasksAndInvalidate() {}

    // https://developer.apple.com/documentation/foundation/urlsession/authchallengedisposition
    // `enum AuthChallengeDisposition` — useCredential, performDefaultHandling, cancelAuthenticationChallenge, rejectProtectionSpace
    public enum AuthChallengeDisposition: Int, Sendable {
        case useCredential, performDefaultHandling, cancelAuthenticationChallenge, rejectProtectionSpace
    }
}

// https://developer.apple.com/documentation/foundation/urlsessiontask
// `class URLSessionTask : NSObject` (Sendable) — `var response: URLResponse? { get }`, `func resume()`, `func cancel()`
open class URLSessionTask: NSObject, @unchecked Sendable {
    open var response: URLResponse? { nil }
    open func resume() {}
    open func cancel() {}
}

// https://developer.apple.com/documentation/foundation/urlsessionwebsockettask
// `class URLSessionWebSocketTask : URLSessionTask`
open class URLSessionWebSocketTask: URLSessionTask, @unchecked Sendable {
    // https://developer.apple.com/documentation/foundation/urlsessionwebsockettask/maximummessagesize
    // `var maximumMessageSize: Int { get set }`
    open var maximumMessageSize: Int = 1 << 20

    // https://developer.apple.com/documentation/foundation/urlsessionwebsockettask/message
    // `enum Message` — `case data(Data)`, `case string(String)` (not frozen: a switch needs `@unknown default`)
    public enum Message: Sendable {
        case data(Data)
        case string(String)
    }

    // https://developer.apple.com/documentation/foundation/urlsessionwebsockettask/closecode
    // `enum CloseCode` (Int) — invalid 0, normalClosure 1000 … tlsHandshakeFailure 1015
    public enum CloseCode: Int, Sendable {
        case invalid = 0, normalClosure = 1000, goingAway = 1001, protocolError = 1002, unsupportedData = 1003
        case noStatusReceived = 1005, abnormalClosure = 1006, invalidFramePayloadData = 1007, policyViolation = 1008
        case messageTooBig = 1009, mandatoryExtensionMissing = 1010, internalServerError = 1011, tlsHandshakeFailure = 1015
    }

    // https://developer.apple.com/documentation/foundation/urlsessionwebsockettask/send(_:)
    // `func send(_ message: URLSessionWebSocketTask.Message) async throws`
    open func send(_ message: URLSessionWebSocketTask.Message) async throws {}

    // https://developer.apple.com/documentation/foundation/urlsessionwebsockettask/receive()
    // `func receive() async throws -> URLSessionWebSocketTask.Message`
    open func receive() async throws -> URLSessionWebSocketTask.Message { .string("") }

    // https://developer.apple.com/documentation/foundation/urlsessionwebsockettask/cancel(with:reason:)
    // `func cancel(with closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?)`
    open func cancel(with closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) {}
}

// https://developer.apple.com/documentation/foundation/urlauthenticationchallenge
// `class URLAuthenticationChallenge : NSObject` — `var protectionSpace: URLProtectionSpace { get }`
open class URLAuthenticationChallenge: NSObject, @unchecked Sendable {
    open var protectionSpace: URLProtectionSpace { URLProtectionSpace() }
}

// https://developer.apple.com/documentation/foundation/urlprotectionspace
// `class URLProtectionSpace : NSObject` — `var authenticationMethod: String`, `var host: String`, `var port: Int`,
// `var serverTrust: SecTrust?` (https://developer.apple.com/documentation/foundation/urlprotectionspace/servertrust)
open class URLProtectionSpace: NSObject, @unchecked Sendable {
    open var authenticationMethod: String { "" }
    open var host: String { "" }
    open var port: Int { 0 }
    open var serverTrust: SecTrust? { nil }
}

// https://developer.apple.com/documentation/foundation/urlcredential
// `class URLCredential : NSObject`
open class URLCredential: NSObject, @unchecked Sendable {}

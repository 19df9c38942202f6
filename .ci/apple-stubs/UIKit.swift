@_exported import Foundation

// https://developer.apple.com/documentation/uikit/uiresponder
// `@MainActor class UIResponder : NSObject`
@MainActor open class UIResponder: NSObject {}

// https://developer.apple.com/documentation/uikit/uiapplication
// `@MainActor class UIApplication : UIResponder`
@MainActor open class UIApplication: UIResponder {
    // https://developer.apple.com/documentation/uikit/uiapplication/shared
    // `class var shared: UIApplication { get }` (main-actor isolated, as its class)
    public class var shared: UIApplication { fatalError("stub") }

    // https://developer.apple.com/documentation/uikit/uiapplication/beginbackgroundtask(withname:expirationhandler:)
    // `nonisolated func beginBackgroundTask(withName taskName: String?, expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil) -> UIBackgroundTaskIdentifier`
    nonisolated public func beginBackgroundTask(
        withName taskName: String?, expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil
    ) -> UIBackgroundTaskIdentifier { .invalid }

    // https://developer.apple.com/documentation/uikit/uiapplication/endbackgroundtask(_:)
    // `nonisolated func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier)`
    nonisolated public func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier) {}

    // https://developer.apple.com/documentation/uikit/uiapplication/didbecomeactivenotification
    // `nonisolated class let didBecomeActiveNotification: NSNotification.Name`
    nonisolated public static let didBecomeActiveNotification = NSNotification.Name("UIApplicationDidBecomeActiveNotification")
    // https://developer.apple.com/documentation/uikit/uiapplication/willresignactivenotification
    // `nonisolated class let willResignActiveNotification: NSNotification.Name`
    nonisolated public static let willResignActiveNotification = NSNotification.Name("UIApplicationWillResignActiveNotification")
    // https://developer.apple.com/documentation/uikit/uiapplication/didenterbackgroundnotification
    // `nonisolated class let didEnterBackgroundNotification: NSNotification.Name`
    nonisolated public static let didEnterBackgroundNotification = NSNotification.Name("UIApplicationDidEnterBackgroundNotification")
    // https://developer.apple.com/documentation/uikit/uiapplication/willenterforegroundnotification
    // `nonisolated class let willEnterForegroundNotification: NSNotification.Name`
    nonisolated public static let willEnterForegroundNotification = NSNotification.Name("UIApplicationWillEnterForegroundNotification")
}

// https://developer.apple.com/documentation/uikit/uibackgroundtaskidentifier
// `struct UIBackgroundTaskIdentifier` (RawRepresentable, Hashable, Sendable)
public struct UIBackgroundTaskIdentifier: RawRepresentable, Hashable, Sendable {
    public var rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    // https://developer.apple.com/documentation/uikit/uibackgroundtaskidentifier/invalid
    // `static let invalid: UIBackgroundTaskIdentifier`
    public static let invalid = UIBackgroundTaskIdentifier(rawValue: 0)
}

@_exported import Foundation

// https://developer.apple.com/documentation/appkit/nsresponder
// `@MainActor class NSResponder : NSObject`
@MainActor open class NSResponder: NSObject {}

// https://developer.apple.com/documentation/appkit/nsapplication
// `@MainActor class NSApplication : NSResponder`
@MainActor open class NSApplication: NSResponder {
    // https://developer.apple.com/documentation/appkit/nsapplication/didbecomeactivenotification
    // `nonisolated class let didBecomeActiveNotification: NSNotification.Name`
    nonisolated public static let didBecomeActiveNotification = NSNotification.Name("NSApplicationDidBecomeActiveNotification")
    // https://developer.apple.com/documentation/appkit/nsapplication/didresignactivenotification
    // `nonisolated class let didResignActiveNotification: NSNotification.Name`
    nonisolated public static let didResignActiveNotification = NSNotification.Name("NSApplicationDidResignActiveNotification")
    // https://developer.apple.com/documentation/appkit/nsapplication/didhidenotification
    // `nonisolated class let didHideNotification: NSNotification.Name`
    nonisolated public static let didHideNotification = NSNotification.Name("NSApplicationDidHideNotification")
    // https://developer.apple.com/documentation/appkit/nsapplication/didunhidenotification
    // `nonisolated class let didUnhideNotification: NSNotification.Name`
    nonisolated public static let didUnhideNotification = NSNotification.Name("NSApplicationDidUnhideNotification")
}

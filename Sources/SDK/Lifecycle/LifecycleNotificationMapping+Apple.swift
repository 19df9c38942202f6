// The platform mappings, with the frameworks' own notification constants (each declared
// `nonisolated class let …: NSNotification.Name`). Not compiled by the Linux build (`.ci/apple-compile`
// compiles it against the documented declarations): the same notifications by raw name
// (`uiKitByName`, …) are what the tests there use.
#if canImport(UIKit) && !os(watchOS)
import UIKit

extension LifecycleNotificationMapping {
    /// UIKit (iOS, iPadOS, tvOS, visionOS, Mac Catalyst).
    public static let uiKit = LifecycleNotificationMapping([
        UIApplication.didBecomeActiveNotification: .active,
        UIApplication.willResignActiveNotification: .inactive,
        UIApplication.didEnterBackgroundNotification: .background,
        UIApplication.willEnterForegroundNotification: .inactive,
    ])
}
#endif

#if canImport(AppKit) && !targetEnvironment(macCatalyst)
import AppKit

extension LifecycleNotificationMapping {
    /// AppKit (macOS): hidden counts as background, not frontmost as inactive.
    public static let appKit = LifecycleNotificationMapping([
        NSApplication.didBecomeActiveNotification: .active,
        NSApplication.didResignActiveNotification: .inactive,
        NSApplication.didHideNotification: .background,
        NSApplication.didUnhideNotification: .inactive,
    ])
}
#endif

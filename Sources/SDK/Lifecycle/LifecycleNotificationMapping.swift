public import ConnectionPolicy
public import Foundation

/// Which notification means which lifecycle state. The platform mappings use the raw
/// notification names, so they compile and are tested everywhere, Linux included.
public struct LifecycleNotificationMapping: Sendable, Hashable {
    /// The state each notification announces.
    public var states: [Notification.Name: AppLifecycleState]

    public init(_ states: [Notification.Name: AppLifecycleState]) {
        self.states = states
    }

    /// UIKit (iOS, iPadOS, tvOS, visionOS, Mac Catalyst).
    public static let uiKit = LifecycleNotificationMapping([
        Notification.Name("UIApplicationDidBecomeActiveNotification"): .active,
        Notification.Name("UIApplicationWillResignActiveNotification"): .inactive,
        Notification.Name("UIApplicationDidEnterBackgroundNotification"): .background,
        Notification.Name("UIApplicationWillEnterForegroundNotification"): .inactive,
    ])

    /// AppKit (macOS): hidden counts as background, not frontmost as inactive.
    public static let appKit = LifecycleNotificationMapping([
        Notification.Name("NSApplicationDidBecomeActiveNotification"): .active,
        Notification.Name("NSApplicationDidResignActiveNotification"): .inactive,
        Notification.Name("NSApplicationDidHideNotification"): .background,
        Notification.Name("NSApplicationDidUnhideNotification"): .inactive,
    ])

    /// WatchKit (watchOS).
    public static let watchKit = LifecycleNotificationMapping([
        Notification.Name("WKApplicationDidBecomeActiveNotification"): .active,
        Notification.Name("WKApplicationWillResignActiveNotification"): .inactive,
        Notification.Name("WKApplicationDidEnterBackgroundNotification"): .background,
        Notification.Name("WKApplicationWillEnterForegroundNotification"): .inactive,
    ])
}

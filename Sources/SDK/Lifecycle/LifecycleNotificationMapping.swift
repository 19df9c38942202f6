public import ConnectionPolicy
public import Foundation

/// Which notification means which lifecycle state. On Apple platforms `uiKit` and `appKit` use
/// the frameworks' own notification constants
/// (`LifecycleNotificationMapping+Apple.swift`); the `…ByName` mappings spell the same
/// notifications by their raw names, so they compile and are tested everywhere, Linux included.
///
/// The state is the app's, not a scene's: on a multi-window iPad the app is in the background
/// only when every scene is (UIKit posts `didEnterBackgroundNotification` then), and active as
/// soon as one scene is.
public struct LifecycleNotificationMapping: Sendable, Hashable {
    /// The state each notification announces.
    public var states: [Notification.Name: AppLifecycleState]

    /// A mapping from each notification to the state it means.
    public init(_ states: [Notification.Name: AppLifecycleState]) {
        self.states = states
    }

    /// UIKit (iOS, iPadOS, tvOS, visionOS, Mac Catalyst), by raw name.
    public static let uiKitByName = LifecycleNotificationMapping([
        Notification.Name("UIApplicationDidBecomeActiveNotification"): .active,
        Notification.Name("UIApplicationWillResignActiveNotification"): .inactive,
        Notification.Name("UIApplicationDidEnterBackgroundNotification"): .background,
        Notification.Name("UIApplicationWillEnterForegroundNotification"): .inactive,
    ])

    /// AppKit (macOS), by raw name: hidden counts as background, not frontmost as inactive.
    public static let appKitByName = LifecycleNotificationMapping([
        Notification.Name("NSApplicationDidBecomeActiveNotification"): .active,
        Notification.Name("NSApplicationDidResignActiveNotification"): .inactive,
        Notification.Name("NSApplicationDidHideNotification"): .background,
        Notification.Name("NSApplicationDidUnhideNotification"): .inactive,
    ])
}

#if canImport(UIKit) && !os(watchOS)
import UIKit

/// ``BackgroundTimeProvider`` on UIKit: `UIApplication.beginBackgroundTask(withName:expirationHandler:)`
/// and `endBackgroundTask(_:)`, on the main queue. Not available in app extensions (no
/// `UIApplication.shared` there): use ``NoBackgroundTime`` in one.
public struct UIKitBackgroundTime: BackgroundTimeProvider {
    public init() {}

    public func begin(_ name: String, expired: @escaping @Sendable () -> Void) -> any BackgroundTimeGrant {
        SystemBackgroundTaskGrant.begin(name, on: UIKitBackgroundTasks(), expired: expired)
    }
}

/// UIKit's two calls; what Tether decides around them is `SystemBackgroundTaskGrant`'s.
struct UIKitBackgroundTasks: BackgroundTaskSystem {
    @MainActor func beginTask(named name: String, onExpiry: @escaping @MainActor @Sendable () -> Void) -> UIBackgroundTaskIdentifier? {
        let task = UIApplication.shared.beginBackgroundTask(withName: name, expirationHandler: onExpiry)
        return task == .invalid ? nil : task
    }

    @MainActor func endTask(_ task: UIBackgroundTaskIdentifier) {
        UIApplication.shared.endBackgroundTask(task)
    }
}
#endif

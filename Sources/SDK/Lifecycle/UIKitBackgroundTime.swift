#if canImport(UIKit) && !os(watchOS)
import Dispatch
import UIKit

/// ``BackgroundTimeProvider`` on UIKit: `UIApplication.beginBackgroundTask(withName:expirationHandler:)`
/// and `endBackgroundTask(_:)`, on the main queue. Not available in app extensions (no
/// `UIApplication.shared` there): use ``NoBackgroundTime`` in one.
public struct UIKitBackgroundTime: BackgroundTimeProvider {
    public init() {}

    public func begin(_ name: String, expired: @escaping @Sendable () -> Void) -> any BackgroundTimeGrant {
        let grant = UIKitBackgroundTimeGrant()
        DispatchQueue.main.async { MainActor.assumeIsolated { grant.start(name, expired: expired) } }
        return grant
    }
}

/// One background task. Its state is main-actor isolated; `end()` hops to the main queue, which
/// runs after the `start` queued before it.
@MainActor
final class UIKitBackgroundTimeGrant: BackgroundTimeGrant {
    private var identifier = UIBackgroundTaskIdentifier.invalid
    private var isEnded = false

    func start(_ name: String, expired: @escaping @Sendable () -> Void) {
        guard !isEnded else { return }
        identifier = UIApplication.shared.beginBackgroundTask(withName: name) {
            expired()
            self.finish()  // iOS ends an app whose expiration handler leaves its task open
        }
        if identifier == .invalid { expired() }
    }

    func finish() {
        isEnded = true
        guard identifier != .invalid else { return }
        UIApplication.shared.endBackgroundTask(identifier)
        identifier = .invalid
    }

    nonisolated func end() {
        DispatchQueue.main.async { MainActor.assumeIsolated { self.finish() } }
    }
}
#endif

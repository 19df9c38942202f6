/// Time to keep running in the background, as the OS grants it: on iOS,
/// `UIApplication.beginBackgroundTask(withName:expirationHandler:)` (a budget of about 30 s the
/// OS decides). Without it an iOS app is suspended seconds after it leaves the foreground, with
/// its socket frozen open: no watchdog fires, no close frame leaves.
///
/// The session asks for it exactly while a policy keeps a connection open or opening in the
/// background (Manual's watchdog window, Auto's grace, a background refresh) and until the close
/// frame of a connection closed there is written; it ends it the moment neither holds, and
/// always on return to the foreground and at shutdown. Inject it like the clock and the
/// lifecycle source: ``PlatformDefaults/backgroundTime()`` on the platform, a
/// `TestBackgroundTime` in tests.
public protocol BackgroundTimeProvider: Sendable {
    /// Asks for background time for the work named `name`. `expired` is called at most once, on
    /// any thread, when the OS takes the time back before ``BackgroundTimeGrant/end()`` (at
    /// once when none can be had); the grant is still ended afterwards.
    func begin(_ name: String, expired: @escaping @Sendable () -> Void) -> any BackgroundTimeGrant
}

/// Background time held: end it once, when the work is done.
public protocol BackgroundTimeGrant: Sendable {
    /// Ends the background time: call it once the work it covered is done (ending twice does
    /// nothing).
    func end()
}

/// Asks for nothing: where the OS does not suspend an app in the background the way iOS does
/// (macOS, Linux), and the default.
public struct NoBackgroundTime: BackgroundTimeProvider {
    /// Background time that holds nothing (every platform but iOS, and tests that do not count it).
    public init() {}

    public func begin(_ name: String, expired: @escaping @Sendable () -> Void) -> any BackgroundTimeGrant {
        Grant()
    }

    struct Grant: BackgroundTimeGrant {
        func end() {}
    }
}

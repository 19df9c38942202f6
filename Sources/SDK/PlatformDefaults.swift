/// The lifecycle source, network monitor and conditions source for the platform the app runs on.
public enum PlatformDefaults {
    /// UIKit's or AppKit's lifecycle notifications on Apple platforms; elsewhere
    /// (Linux) a manual source that changes only when told.
    public static func lifecycleSource() -> any LifecycleSource {
        #if canImport(UIKit) && !os(watchOS)
        NotificationLifecycleSource(mapping: .uiKit)
        #elseif canImport(AppKit)
        NotificationLifecycleSource(mapping: .appKit)
        #else
        ManualLifecycleSource()
        #endif
    }

    /// Background execution time: `UIApplication.beginBackgroundTask` on iOS, iPadOS, tvOS and
    /// visionOS (not in app extensions); elsewhere nothing to ask for (``NoBackgroundTime``).
    public static func backgroundTime() -> any BackgroundTimeProvider {
        #if canImport(UIKit) && !os(watchOS)
        UIKitBackgroundTime()
        #else
        NoBackgroundTime()
        #endif
    }

    /// `NWPathMonitor` on Apple platforms; elsewhere (Linux) a manual monitor that changes only
    /// when told.
    public static func networkMonitor() -> any NetworkMonitor {
        #if canImport(Network)
        PathNetworkMonitor()
        #else
        ManualNetworkMonitor()
        #endif
    }

    /// The device's conditions from `NWPathMonitor` and `ProcessInfo` on Apple platforms
    /// (`SystemConditionsSource` (Apple platforms only)); elsewhere (Linux) a manual source that changes only when
    /// told. A session given this and no network monitor takes reachability from it too.
    public static func conditionsSource() -> any DeviceConditionsSource {
        #if canImport(Network)
        SystemConditionsSource()
        #else
        ManualConditionsSource()
        #endif
    }
}

public import ConnectionPolicy

/// Where a session learns the app's lifecycle state.
public protocol LifecycleSource: Sendable {
    /// The state now.
    var state: AppLifecycleState { get }

    /// Hands the state now, then every change, to `handler`, awaiting each, until the calling
    /// task is cancelled.
    func deliverChanges(to handler: @escaping @Sendable (AppLifecycleState) async -> Void) async
}

extension LifecycleSource where Self == ManualLifecycleSource {
    /// The lifecycle source for this platform: UIKit's, AppKit's or WatchKit's notifications on
    /// Apple platforms; elsewhere (Linux) a manual source that changes only when told.
    public static var platformDefault: any LifecycleSource {
        #if canImport(UIKit) && !os(watchOS)
        NotificationLifecycleSource(mapping: .uiKit)
        #elseif canImport(WatchKit)
        NotificationLifecycleSource(mapping: .watchKit)
        #elseif canImport(AppKit)
        NotificationLifecycleSource(mapping: .appKit)
        #else
        ManualLifecycleSource()
        #endif
    }
}

/// Where the app is in its lifecycle, as the operating system (or the app itself) reports it.
///
/// The app's three states; these cases are all there will be.
@frozen
public enum AppLifecycleState: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The app is in the foreground and receiving events.
    case active
    /// The app is in the foreground but not receiving events (a system alert, the app switcher).
    case inactive
    /// The app is in the background.
    case background

    /// Indicates that the app is on screen (`active` or `inactive`).
    public var isForeground: Bool { self != .background }

    public var description: String {
        switch self {
        case .active: "active"
        case .inactive: "inactive"
        case .background: "background"
        }
    }
}

public import SDK

/// Drives a session's lifecycle in a test: each call returns once the session has handled the
/// change, so the next line can assert on it.
///
/// ```swift
/// @Test func backgroundDisconnects() async throws {
///     let lifecycle = LifecycleDriver()
///     let session = Session(settings: try .testing(), transport: TestServer().transport(), clock: TestClock(), lifecycle: lifecycle)
///     try await withRunningSession(session) { status in
///         try await status.waitFor(.connected)
///         await lifecycle.background()
///         #expect(session.status == .disconnected(.appBackgrounded))
///     }
/// }
/// ```
public final class LifecycleDriver: LifecycleSource {
    private let source: ManualLifecycleSource

    /// A driver that starts in `initialState`.
    public init(initialState: AppLifecycleState = .active) {
        source = ManualLifecycleSource(initialState: initialState)
    }

    public var state: AppLifecycleState { source.state }

    /// The app went to the background.
    public func background() async { await source.send(.background) }
    /// The app came to the foreground and is active.
    public func foreground() async { await source.send(.active) }
    /// The app is on screen but not receiving events.
    public func inactive() async { await source.send(.inactive) }
    /// Any state.
    public func send(_ state: AppLifecycleState) async { await source.send(state) }

    public func deliverChanges(to handler: @escaping @Sendable (AppLifecycleState) async -> Void) async {
        await source.deliverChanges(to: handler)
    }
}

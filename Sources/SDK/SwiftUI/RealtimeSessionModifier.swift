// SwiftUI wiring: not compiled by `swift build` on Linux; `.ci/apple-compile` compiles it there
// against SwiftUI's declarations as Apple documents them (`.ci/apple-stubs/SwiftUI.swift`).
#if canImport(SwiftUI)
public import ConnectionPolicy
public import SwiftUI

extension View {
    /// Runs `session` for the view's lifetime (it ends, and shuts the session down, with the
    /// view) and feeds it the scene phase: `.active`, `.inactive` and `.background` as the
    /// app's lifecycle, in order.
    public func realtimeSession(_ session: Session) -> some View {
        modifier(RealtimeSessionModifier(session: session))
    }
}

struct RealtimeSessionModifier: ViewModifier {
    let session: Session
    @Environment(\.scenePhase) private var scenePhase

    func body(content: Content) -> some View {
        content
            .task { await session.run() }
            .onChange(of: scenePhase, initial: true) { _, phase in
                session.reportAppState(AppLifecycleState(phase))
            }
    }
}

extension AppLifecycleState {
    /// The lifecycle state a scene phase stands for (a phase added later counts as inactive).
    public init(_ phase: ScenePhase) {
        switch phase {
        case .active: self = .active
        case .background: self = .background
        case .inactive: self = .inactive
        @unknown default: self = .inactive
        }
    }
}
#endif

import ConnectionPolicy

/// What a session or controller shows for diagnostics, kept beside the actor so it can be read
/// from anywhere without `await` — like `status` (`#expect(session.policyName == "manual")`).
/// The actor writes it where the state changes; a read sees the last write.
final class DiagnosticsMirror: Sendable {
    struct Snapshot: Sendable {
        var policyName = ""
        var appState = AppLifecycleState.active
        var armedTimers: [SessionTimer] = []
        var channels: [String: StreamPosition?] = [:]
        var journal: [RecoveryStepID] = []
    }

    private let snapshot = Locked(Snapshot())

    var current: Snapshot { snapshot.withLock { $0 } }

    func update(_ body: (inout Snapshot) -> Void) { snapshot.withLock(body) }
}

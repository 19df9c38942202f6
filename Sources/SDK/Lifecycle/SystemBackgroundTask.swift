import Dispatch

/// The system call that grants background execution time, as UIKit's
/// `beginBackgroundTask(withName:expirationHandler:)` and `endBackgroundTask(_:)` do it:
/// main-actor calls, a handler the system calls on the main thread shortly before the time runs
/// out (the task must be ended by then, or the system ends the app), and no task when no time can
/// be given (`UIBackgroundTaskIdentifier.invalid`, here `nil`).
///
/// Linux compiles and tests what Tether decides around these calls
/// (``SystemBackgroundTaskGrant``); `UIKitBackgroundTime` is the two calls and nothing else.
protocol BackgroundTaskSystem: Sendable {
    associatedtype TaskID: Sendable
    /// Begins a task named `name`; `nil` when the system gives no time.
    @MainActor func beginTask(named name: String, onExpiry: @escaping @MainActor @Sendable () -> Void) -> TaskID?
    /// Ends a task this system began.
    @MainActor func endTask(_ task: TaskID)
}

/// One grant of background time on a ``BackgroundTaskSystem``: begun on the main actor, ended
/// once — by the app (``end()``, from any thread), or at the system's expiry, which also tells
/// the session that the time is over (`expired`). An `end()` that comes before the begin has
/// run leaves no task behind.
@MainActor
final class SystemBackgroundTaskGrant<System: BackgroundTaskSystem>: BackgroundTimeGrant {
    /// Runs work on the main actor, in order: the main queue in an app, at once in a test.
    typealias MainScheduler = @Sendable (@escaping @MainActor @Sendable () -> Void) -> Void

    private let system: System
    private let schedule: MainScheduler
    private var task: System.TaskID?
    private var isEnded = false

    nonisolated private init(system: System, schedule: @escaping MainScheduler) {
        self.system = system
        self.schedule = schedule
    }

    /// Asks `system` for background time named `name`, on the main actor; `expired` is called
    /// when it runs out or none is given.
    nonisolated static func begin(
        _ name: String, on system: System, schedule: @escaping MainScheduler = mainQueue, expired: @escaping @Sendable () -> Void
    ) -> SystemBackgroundTaskGrant {
        let grant = SystemBackgroundTaskGrant(system: system, schedule: schedule)
        schedule { grant.start(name, expired: expired) }
        return grant
    }

    private func start(_ name: String, expired: @escaping @Sendable () -> Void) {
        guard !isEnded else { return }
        task = system.beginTask(named: name) { [self] in
            expired()
            finish()  // the system ends an app whose expiration handler leaves its task open
        }
        if task == nil {
            isEnded = true
            expired()
        }
    }

    private func finish() {
        isEnded = true
        guard let task else { return }
        self.task = nil
        system.endTask(task)
    }

    /// Ends the task (once), on the main actor, after a begin queued before it.
    nonisolated func end() {
        schedule { self.finish() }
    }

    /// The main queue, as UIKit's calls want it.
    nonisolated static var mainQueue: MainScheduler {
        { work in DispatchQueue.main.async { MainActor.assumeIsolated { work() } } }
    }
}

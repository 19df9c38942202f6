@testable import SDK
import SDKTesting
import Testing

/// What Tether decides around UIKit's background-task calls, on Linux, through an application
/// that keeps UIKit's documented semantics: a task per begin until it is ended, no task when no
/// time can be given, and an expiration handler after which the task must be ended — or the
/// system ends the app.
@MainActor
@Suite("Background time on a system API: begun on the main actor, ended once")
struct SystemBackgroundTaskTests {
    /// UIKit's `UIApplication`, as its pages describe the two calls.
    @MainActor final class FakeApplication {
        var givesTime = true
        var began: [String] = []
        var ended: [Int] = []
        var open: [Int: @MainActor @Sendable () -> Void] = [:]
        /// A task still open when its expiration handler returned: the system would end the app.
        var terminated = false
        private var next = 1

        func begin(_ name: String, _ onExpiry: @escaping @MainActor @Sendable () -> Void) -> Int? {
            began.append(name)
            guard givesTime else { return nil }
            defer { next += 1 }
            open[next] = onExpiry
            return next
        }

        func end(_ task: Int) {
            ended.append(task)
            open[task] = nil
        }

        /// The time runs out: each open task's handler is called, on the main actor.
        func expire() {
            for (task, handler) in open.sorted(by: { $0.key < $1.key }) {
                handler()
                if open[task] != nil { terminated = true }
            }
        }
    }

    struct Tasks: BackgroundTaskSystem {
        let application: FakeApplication
        @MainActor func beginTask(named name: String, onExpiry: @escaping @MainActor @Sendable () -> Void) -> Int? { application.begin(name, onExpiry) }
        @MainActor func endTask(_ task: Int) { application.end(task) }
    }

    /// Main-actor work, queued in order and run when the test says (the main queue, made explicit).
    final class Queue: Sendable {
        private let pending = Locked<[@MainActor @Sendable () -> Void]>([])
        var schedule: SystemBackgroundTaskGrant<Tasks>.MainScheduler { { work in self.pending.withLock { $0.append(work) } } }
        @MainActor func run() {
            while let work = pending.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { work() }
        }
    }

    let application = FakeApplication()
    let queue = Queue()
    let expiries = Locked(0)

    func begin(_ name: String = "tether") -> SystemBackgroundTaskGrant<Tasks> {
        let expiries = expiries
        return SystemBackgroundTaskGrant.begin(name, on: Tasks(application: application), schedule: queue.schedule) { expiries.withLock { $0 += 1 } }
    }

    @Test("begun on the main queue, ended once however often end() is called")
    func beginAndEndOnce() {
        let grant = begin("session")
        #expect(application.began.isEmpty, "nothing before the main queue runs")
        queue.run()
        #expect(application.began == ["session"] && application.open.keys.sorted() == [1])
        grant.end()
        grant.end()
        queue.run()
        #expect(application.ended == [1], "one endBackgroundTask for one begin")
        #expect(expiries.withLock { $0 } == 0)
    }

    @Test("the time runs out: the session is told, and the task is ended inside the expiration handler (else the system ends the app); a later end() ends nothing more")
    func expiry() {
        let grant = begin()
        queue.run()
        application.expire()
        #expect(expiries.withLock { $0 } == 1)
        #expect(application.ended == [1] && !application.terminated)
        grant.end()
        queue.run()
        #expect(application.ended == [1])
    }

    @Test("no time given (UIBackgroundTaskIdentifier.invalid): the session is told at once, and nothing is ended")
    func noTimeGiven() {
        application.givesTime = false
        let grant = begin()
        queue.run()
        #expect(expiries.withLock { $0 } == 1)
        grant.end()
        queue.run()
        #expect(application.ended.isEmpty)
    }

    @Test("end() right after begin, before the main queue ran either: the task is begun and then ended, in order — none left open")
    func endBeforeTheBeginRan() {
        let grant = begin()
        grant.end()
        queue.run()
        #expect(application.began.count == 1 && application.ended == [1] && application.open.isEmpty)
    }
}

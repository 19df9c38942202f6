import SDK

/// Background time as the demo shows it: what the session holds, narrated (on iOS this is
/// `UIApplication.beginBackgroundTask`; here, where nothing suspends the process, it only counts).
final class DemoBackgroundTime: BackgroundTimeProvider {
    private let held = Locked(0)
    private let released = Locked(OneShot())
    private let narrator: Narrator

    init(narrator: Narrator) { self.narrator = narrator }

    var heldCount: Int { held.withLock { $0 } }

    func begin(_ name: String, expired: @escaping @Sendable () -> Void) -> any BackgroundTimeGrant {
        held.withLock { $0 += 1 }
        narrator.say("  background time held (on iOS: beginBackgroundTask \"\(name)\")")
        return Grant(owner: self)
    }

    /// Waits until nothing is held, at most `timeout`.
    func waitUntilReleased(timeout: Duration) async -> Bool {
        guard heldCount > 0 else { return true }
        let signal = released.withLock { $0 }
        return await signal.wait(upTo: timeout) || heldCount == 0
    }

    fileprivate func ended() {
        let signal: OneShot? = held.withLock { count in
            count -= 1
            return count == 0 ? released.withLock { current in
                defer { current = OneShot() }
                return current
            } : nil
        }
        narrator.say("  background time released (on iOS: endBackgroundTask)")
        signal?.fire()
    }

    private struct Grant: BackgroundTimeGrant {
        let owner: DemoBackgroundTime
        func end() { owner.ended() }
    }
}

import Foundation

/// A value behind a lock, for the few places state is shared outside an actor (status readers,
/// cancel tokens, test fakes).
///
/// `@unchecked Sendable` is sound: `value` is private and only touched inside `withLock`, which
/// holds `lock` for the whole access, so no two threads see it at once; `Value: Sendable`
/// makes handing values in and out safe.
package final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    /// Not checked for exclusive access at run time (a check per access was a tenth of a
    /// subscriber's per-message cost): the lock already makes every access exclusive, and a
    /// `body` that re-entered would stop at the lock before it reached the value.
    @exclusivity(unchecked) private var value: Value

    package init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, holding the lock. `body` must not block or re-enter.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

import Foundation

/// A value behind a lock, for the few places state is shared outside an actor (status readers,
/// cancel tokens, test fakes).
///
/// `@unchecked Sendable` is sound: `value` is private and only touched inside `withLock`, which
/// holds `lock` for the whole access, so no two threads see it at once; `Value: Sendable`
/// makes handing values in and out safe.
package final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, holding the lock. `body` must not block or re-enter.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

import ConnectionPolicy
import SDK
import SDKTesting
import Testing

/// A value handed over once, awaited without polling.
final class OneShotBox: Sendable {
    private let value = Locked<String?>(nil)
    private let signal = AsyncStream<Void>.makeStream()

    func fire(_ text: String) {
        value.withLock { $0 = text }
        signal.continuation.finish()
    }

    func value() async -> String? {
        for await _ in signal.stream {}
        return value.withLock { $0 }
    }
}

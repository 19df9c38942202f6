/// The calls an app makes on a connection, whichever runtime carries them out (``Session``,
/// ``ConnectionController``), and CometChat's callback shapes built on them once for both.
public protocol ConnectionCalls: Sendable {
    /// Asks for a connection and returns once connected (or throws why not).
    func connect() async throws
    /// Disconnects; nothing reconnects by itself until ``connect()``.
    func disconnect() async
    /// Pings (in Manual mode in the background, each ping buys another watchdog window).
    func ping() async throws
}

extension ConnectionCalls {
    /// ``connect()`` in CometChat's shape: `onSuccess` once connected, `onError` otherwise.
    public func connect(onSuccess: @escaping @Sendable () -> Void, onError: @escaping @Sendable (any Error) -> Void) {
        Task {
            do {
                try await connect()
                onSuccess()
            } catch {
                onError(error)
            }
        }
    }

    /// ``disconnect()`` in CometChat's shape (it cannot fail: `onError` is never called).
    public func disconnect(onSuccess: @escaping @Sendable () -> Void, onError: @escaping @Sendable (any Error) -> Void = { _ in }) {
        Task {
            await disconnect()
            onSuccess()
        }
    }

    /// ``ping()`` in CometChat's shape.
    public func ping(onSuccess: @escaping @Sendable () -> Void, onError: @escaping @Sendable (any Error) -> Void) {
        Task {
            do {
                try await ping()
                onSuccess()
            } catch {
                onError(error)
            }
        }
    }
}

extension Session: ConnectionCalls {}
extension ConnectionController: ConnectionCalls {}

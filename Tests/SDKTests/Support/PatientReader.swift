import SDK
import Testing

/// Reads an `AsyncStream` for a test through one pump task, so that a read can give up after its
/// patience (real time: a safety net, never a timing check) without cancelling the stream's
/// iterator, which would end the stream for every later read. A read that gives up records an
/// issue naming what it waited for and returns `nil`: a missing frame fails the test in seconds,
/// with a message, instead of hanging until the suite's time limit. The pump holds only the
/// shared state, never the reader, and ends when the reader goes (a log that never finishes
/// leaves no task behind).
final class PatientReader<Element: Sendable>: Sendable {
    private struct State {
        var buffer: [Element] = []
        var ended = false
        var waiter: CheckedContinuation<Void, Never>?
        var expiredRead: UInt64?
        var reads: UInt64 = 0
        /// A read gave up (the test has failed): later reads of an empty buffer return `nil` at
        /// once, so one missing frame costs one patience, not one per read.
        var gaveUp = false
    }

    private enum Step {
        case element(Element)
        case end
        case expired
        case wait
    }

    private let state: Locked<State>
    private let pump: Task<Void, Never>

    init(_ stream: AsyncStream<Element>) {
        let state = Locked(State())
        self.state = state
        pump = Task {
            for await element in stream {
                state.withLock { state -> CheckedContinuation<Void, Never>? in
                    state.buffer.append(element)
                    defer { state.waiter = nil }
                    return state.waiter
                }?.resume()
            }
            state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.ended = true
                defer { state.waiter = nil }
                return state.waiter
            }?.resume()
        }
    }

    deinit { pump.cancel() }

    /// The next element; `nil` once the stream has ended, or — with an issue recorded — when
    /// none came within `patience` (and at once for every read after that one).
    func next(patience: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation) async -> Element? {
        let read = state.withLock { state in
            state.reads += 1
            return state.reads
        }
        var timer: Task<Void, Never>?
        defer { timer?.cancel() }
        while true {
            let step = state.withLock { state -> Step in
                if !state.buffer.isEmpty { return .element(state.buffer.removeFirst()) }
                if state.ended || state.gaveUp { return .end }
                if state.expiredRead == read {
                    state.gaveUp = true
                    return .expired
                }
                return .wait
            }
            switch step {
            case .element(let element):
                return element
            case .end:
                return nil
            case .expired:
                Issue.record("nothing came within \(patience) (the stream is still open)", sourceLocation: sourceLocation)
                return nil
            case .wait:
                if timer == nil {
                    let state = self.state
                    timer = Task {
                        guard (try? await Task.sleep(for: patience)) != nil else { return }
                        state.withLock { state -> CheckedContinuation<Void, Never>? in
                            state.expiredRead = read
                            defer { state.waiter = nil }
                            return state.waiter
                        }?.resume()
                    }
                }
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now = state.withLock { state -> Bool in
                        if !state.buffer.isEmpty || state.ended || state.expiredRead == read { return true }
                        state.waiter = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
            }
        }
    }
}

extension PatientReader where Element == ChannelMessage {
    /// Reads `subscription` through a pump task, each read with patience. The pump asks for the
    /// next message as soon as it has one, so every message counts as finished at once: for
    /// reading what comes, not for what the app finishes.
    convenience init(messagesOf subscription: Subscription) {
        let (stream, continuation) = AsyncStream<ChannelMessage>.makeStream()
        let pump = Task {
            do {
                for try await message in subscription { continuation.yield(message) }
            } catch {}
            continuation.finish()
        }
        continuation.onTermination = { _ in pump.cancel() }
        self.init(stream)
    }
}

extension PatientReader where Element == Result<ChannelMessage, SessionError> {
    /// Reads what is left of a subscription through `iterator`, eagerly, each read with patience:
    /// every message, then the error that ended it (if one did).
    convenience init(rest iterator: sending Subscription.Iterator) {
        let (stream, continuation) = AsyncStream<Element>.makeStream()
        let pump = Task {
            var iterator = iterator
            do {
                while let message = try await iterator.next() { continuation.yield(.success(message)) }
            } catch let error as SessionError {
                continuation.yield(.failure(error))
            } catch {}
            continuation.finish()
        }
        continuation.onTermination = { _ in pump.cancel() }
        self.init(stream)
    }

    /// The next message's data (`nil` for an error, the end, or nothing within the patience).
    func nextData(sourceLocation: SourceLocation = #_sourceLocation) async -> JSONValue? {
        guard case .success(let message)? = await next(sourceLocation: sourceLocation) else { return nil }
        return message.data
    }

    /// The next message's sequence (`nil` for an error, the end, or nothing within the patience).
    func nextSequence(sourceLocation: SourceLocation = #_sourceLocation) async -> UInt64? {
        guard case .success(let message)? = await next(sourceLocation: sourceLocation) else { return nil }
        return message.sequence
    }

    /// The error that ended the subscription, once its messages are read (`nil` if none came).
    func nextError(sourceLocation: SourceLocation = #_sourceLocation) async -> SessionError? {
        guard case .failure(let error)? = await next(sourceLocation: sourceLocation) else { return nil }
        return error
    }
}

/// Where an ``EventBatchingConnection``'s reads go, in order: held until one reader attaches,
/// then handed to it. A reader attaches once, as a stream (``stream()``: a task reads it) or
/// directly (``attach(_:)``: the transport's own thread calls it with each read, so the read
/// reaches the session's funnel with no task in between — one wake-up less per read).
///
/// What the reader has not taken yet is the transport's to bound: the reader says what it took
/// (``taken(_:)``), and a transport that stops reading its socket past a limit reads on.
package final class BatchOutlet: Sendable {
    private enum Reader {
        /// No reader yet: the reads wait here, and whether the transport has finished.
        case waiting([[TransportEvent]], finished: Bool)
        case stream(AsyncStream<[TransportEvent]>.Continuation)
        case direct(@Sendable ([TransportEvent]) -> Void, closed: Bool)
    }

    /// The reader, and what waits for it. Calls to a direct reader are made under the lock, so
    /// the reads that waited and the ones that come meanwhile reach it in order; a direct reader
    /// only queues what it is given (it never calls back here).
    private let reader = Locked(Reader.waiting([], finished: false))
    private let onTaken: @Sendable (Int) -> Void

    /// `onTaken`: called with the frame bytes of each read the reader took.
    package init(onTaken: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.onTaken = onTaken
    }

    /// Indicates that a reader took the reads directly (``attach(_:)``).
    package var isDirect: Bool {
        reader.withLock { if case .direct = $0 { true } else { false } }
    }

    /// The transport read `batch` (from its own thread).
    package func yield(_ batch: [TransportEvent]) {
        reader.withLock { reader in
            switch reader {
            case .waiting(var waiting, let finished):
                guard !finished else { return }
                waiting.append(batch)
                reader = .waiting(waiting, finished: false)
            case .stream(let continuation):
                continuation.yield(batch)
            case .direct(let deliver, let closed):
                guard !closed else { return }
                deliver(batch)
                if batch.containsClose { reader = .direct(deliver, closed: true) }
            }
        }
    }

    /// The transport reads no more. A direct reader that was not handed a `.closed` is handed
    /// one, so the connection never looks open once its reads have ended.
    package func finish() {
        reader.withLock { reader in
            switch reader {
            case .waiting(let waiting, _):
                reader = .waiting(waiting, finished: true)
            case .stream(let continuation):
                continuation.finish()
            case .direct(let deliver, closed: false):
                deliver([Self.ended])
                reader = .direct(deliver, closed: true)
            case .direct:
                break
            }
        }
    }

    /// The reads as a stream, for a reader task (at most one reader, stream or direct).
    package func stream() -> AsyncStream<[TransportEvent]> {
        let (stream, continuation) = AsyncStream<[TransportEvent]>.makeStream()
        reader.withLock { reader in
            guard case .waiting(let waiting, let finished) = reader else {
                preconditionFailure("a batching connection has one reader")
            }
            for batch in waiting { continuation.yield(batch) }
            if finished { continuation.finish() }
            reader = .stream(continuation)
        }
        return stream
    }

    /// Hands every read to `deliver`, those that waited first, then each as it comes, on the
    /// transport's thread (at most one reader, stream or direct).
    package func attach(_ deliver: @escaping @Sendable ([TransportEvent]) -> Void) {
        reader.withLock { reader in
            guard case .waiting(let waiting, let finished) = reader else {
                preconditionFailure("a batching connection has one reader")
            }
            var closed = false
            for batch in waiting where !closed {
                deliver(batch)
                closed = batch.containsClose
            }
            if finished, !closed {
                deliver([Self.ended])
                closed = true
            }
            reader = .direct(deliver, closed: closed)
        }
    }

    /// The reader took `batch`: its bytes go back to the transport's bound.
    package func taken(_ batch: [TransportEvent]) {
        onTaken(batch.frameBytes)
    }

    private static let ended = TransportEvent.closed(code: nil, reason: "the transport's events ended")
}

extension [TransportEvent] {
    /// Indicates that a `.closed` is among these events.
    var containsClose: Bool {
        contains { if case .closed = $0 { true } else { false } }
    }
}

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
        /// A direct reader: `false` from it says it is gone.
        case direct(@Sendable ([TransportEvent]) -> Bool)
        /// The direct reader was handed a close, or is gone: nothing more goes to it, and it is
        /// let go (it holds what it feeds; the outlet must not keep it).
        case done
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
        reader.withLock {
            switch $0 {
            case .direct, .done: true
            case .waiting, .stream: false
            }
        }
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
            case .direct(let deliver):
                if !deliver(batch) {
                    // The reader is gone: nothing waits for this read.
                    onTaken(batch.frameBytes)
                    reader = .done
                } else if batch.containsClose {
                    reader = .done
                }
            case .done:
                break
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
            case .direct(let deliver):
                _ = deliver([Self.ended])  // the reads ended without a close
                reader = .done
            case .done:
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
    /// transport's thread, until it is handed a close or answers `false` (it is gone); at most
    /// one reader, stream or direct.
    package func attach(_ deliver: @escaping @Sendable ([TransportEvent]) -> Bool) {
        reader.withLock { reader in
            guard case .waiting(let waiting, let finished) = reader else {
                preconditionFailure("a batching connection has one reader")
            }
            var done = false
            for batch in waiting where !done {
                done = !deliver(batch) || batch.containsClose
            }
            if finished, !done {
                _ = deliver([Self.ended])
                done = true
            }
            reader = done ? .done : .direct(deliver)
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

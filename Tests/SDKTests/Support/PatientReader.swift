import Testing

/// Reads an `AsyncStream` for a test through one pump task, so that a read can give up after its
/// patience (real time: a safety net, never a timing check) without cancelling the stream's
/// iterator, which would end the stream for every later read. A read that gives up records an
/// issue naming what it waited for and returns `nil`: a missing frame fails the test in seconds,
/// with a message, instead of hanging until the suite's time limit.
actor PatientReader<Element: Sendable> {
    private var buffer: [Element] = []
    private var ended = false
    private var parked: CheckedContinuation<Void, Never>?
    private var expiredRead: UInt64?
    private var reads: UInt64 = 0
    /// A read gave up (the test has failed): later reads of an empty buffer return `nil` at once,
    /// so one missing frame costs one patience, not one per read.
    private var gaveUp = false

    init(_ stream: AsyncStream<Element>) {
        Task { [weak self] in
            for await element in stream {
                guard let self else { return }
                await self.arrived(element)
            }
            await self?.finished()
        }
    }

    private func arrived(_ element: Element) {
        buffer.append(element)
        wake()
    }

    private func finished() {
        ended = true
        wake()
    }

    private func wake() {
        let parked = self.parked
        self.parked = nil
        parked?.resume()
    }

    private func expire(_ read: UInt64) {
        expiredRead = read
        wake()
    }

    /// The next element; `nil` once the stream has ended, or — with an issue recorded — when
    /// none came within `patience` (and at once for every read after that one).
    func next(patience: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation) async -> Element? {
        reads += 1
        let read = reads
        var timer: Task<Void, Never>?
        defer { timer?.cancel() }
        while buffer.isEmpty {
            if ended || gaveUp { return nil }
            if expiredRead == read {
                gaveUp = true
                Issue.record("nothing came within \(patience) (the stream is still open)", sourceLocation: sourceLocation)
                return nil
            }
            if timer == nil {
                timer = Task { [weak self] in
                    guard (try? await Task.sleep(for: patience)) != nil else { return }
                    await self?.expire(read)
                }
            }
            await withCheckedContinuation { parked = $0 }
        }
        return buffer.removeFirst()
    }
}

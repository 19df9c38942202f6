public import SDK

/// A wait of a ``StatusRecorder`` that did not see its status: the recording ended first, or
/// the recorder's patience ran out. Its description names what was awaited, where, and what came.
public struct StatusRecorderError: Error, CustomStringConvertible {
    /// A later release may add a reason, so a `switch` over it needs a `default`.
    public enum Reason: Hashable, Sendable {
        /// The session (or controller) ended first.
        case ended
        /// No matching status within the recorder's patience.
        case timedOut(after: Duration)
    }

    /// Why the wait failed.
    public let reason: Reason
    /// What the wait was for (a status, or "a status matching the predicate").
    public let expected: String
    /// The statuses this wait read before it gave up.
    public let passed: [ConnectionStatus]
    /// Every status the recorder had read by then, from the first.
    public let history: [ConnectionStatus]
    /// Where the wait was called.
    public let file: String
    /// The line of the wait that failed.
    public let line: UInt

    init(reason: Reason, expected: String, passed: [ConnectionStatus], history: [ConnectionStatus], file: StaticString, line: UInt) {
        self.reason = reason
        self.expected = expected
        self.passed = passed
        self.history = history
        self.file = "\(file)"
        self.line = line
    }

    public var description: String {
        let why = switch reason {
        case .ended: "the session ended first"
        case .timedOut(let patience): "nothing matched within \(patience)"
        }
        return "\(file):\(line): waited for \(expected); \(why). Statuses seen by this wait: \(passed); all so far: \(history)"
    }
}

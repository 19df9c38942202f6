package import SDK

/// A test double's wait that did not see what it waited for within its patience: it names what
/// was awaited, what there was instead, and where the wait was called — a failure with a
/// message in seconds, instead of a run that hangs until a suite's time limit.
public struct WaitTimeout: Error, CustomStringConvertible {
    /// What the wait was for ("2 open connections").
    public let expected: String
    /// What there was when the patience ran out ("1 open").
    public let found: String
    /// How long it waited (real time).
    public let patience: Duration
    /// Where the wait was called.
    public let file: String
    /// The line of the wait that gave up.
    public let line: UInt

    package init(expected: String, found: String, patience: Duration, file: String, line: UInt) {
        self.expected = expected
        self.found = found
        self.patience = patience
        self.file = file
        self.line = line
    }

    public var description: String {
        "\(file):\(line): waited \(patience) for \(expected); found \(found)"
    }
}

/// Waits for `signal` (nothing to wait for when `nil`) at most `patience` of real time, then
/// throws ``WaitTimeout`` with `found()` read at that moment. Real time is a safety net here,
/// never a timing check: the signal comes at once in a passing test.
package func waitWithPatience(
    _ signal: OneShot?, patience: Duration, expected: @autoclosure () -> String,
    found: () -> String, file: StaticString, line: UInt
) async throws {
    guard let signal, await !signal.wait(upTo: patience) else { return }
    throw WaitTimeout(expected: expected(), found: found(), patience: patience, file: "\(file)", line: line)
}

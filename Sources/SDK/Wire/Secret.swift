/// A credential. Its `description`, `debugDescription` and reflection never show the value, so
/// it cannot end up in a log, a status or an error message by accident.
public struct Secret: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The value itself: read it only to put it on the wire.
    public let revealedValue: String

    /// A secret holding `value`.
    public init(_ value: String) { self.revealedValue = value }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "Secret(<redacted>)" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

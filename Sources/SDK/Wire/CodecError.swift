/// A frame the codec would not accept. The session reports it and keeps working (or, for a
/// server that keeps sending garbage, closes cleanly).
public struct CodecError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of problem. New codes may be added; `switch` with a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Wrapped: String, Hashable, Sendable {
            case oversize, tooDeep, invalidNumber, malformed, unknownType, missingField, unsupportedFrame
        }

        let wrapped: Wrapped

        /// The frame is larger than the codec's limit.
        public static let oversize = Code(wrapped: .oversize)
        /// The frame nests deeper than the codec's limit (see `docs/PROTOCOL.md` for how levels
        /// are counted).
        public static let tooDeep = Code(wrapped: .tooDeep)
        /// A number JSON cannot carry (NaN or an infinity), or one beyond a 64-bit float's range.
        public static let invalidNumber = Code(wrapped: .invalidNumber)
        /// The frame is not valid JSON, or not a JSON object.
        public static let malformed = Code(wrapped: .malformed)
        /// The frame's `type` is not one this side knows.
        public static let unknownType = Code(wrapped: .unknownType)
        /// A field the type requires is missing, has the wrong type, or is out of range (a
        /// channel name of 0 or more than 256 bytes, a negative id).
        public static let missingField = Code(wrapped: .missingField)
        /// The frame is binary; the protocol uses text frames.
        public static let unsupportedFrame = Code(wrapped: .unsupportedFrame)

        public var description: String { wrapped.rawValue }
    }

    /// What kind of failure.
    public let code: Code
    /// What was wrong, in words.
    public let message: String

    /// An error with its code and message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}

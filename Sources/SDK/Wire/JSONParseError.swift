/// Why a JSON text could not be parsed, and where.
struct JSONParseError: Error, Hashable, Sendable, CustomStringConvertible {
    let message: String
    let offset: Int
    /// Indicates that the text is valid so far but nests deeper than the limit.
    let isDepthLimit: Bool

    init(_ message: String, at offset: Int, isDepthLimit: Bool = false) {
        self.message = message
        self.offset = offset
        self.isDepthLimit = isDepthLimit
    }

    var description: String { "\(message) at byte \(offset)" }
}

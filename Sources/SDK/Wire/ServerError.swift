/// An error reply from the server.
public struct ServerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The request it answers, if any.
    public var id: RequestID?
    /// A machine-readable code (`unauthorized`, `bad_request`, `unknown_channel`, …).
    public var code: String
    /// What went wrong, for people.
    public var message: String

    /// An error answering request `id` (`nil`: no request), with the server's code and message.
    public init(id: RequestID?, code: String, message: String) {
        self.id = id
        self.code = code
        self.message = message
    }

    /// The code the server uses for rejected credentials.
    public static let unauthorizedCode = "unauthorized"

    public var description: String { "\(code): \(message)" + (id.map { " (request #\($0))" } ?? "") }
}

/// How a publish ended, as far as the server's protocol can tell: acknowledged by the server,
/// or — where the protocol has no acknowledgement for it — sent and not confirmed. Never a
/// pretended acknowledgement.
public struct PublishReceipt: Hashable, Sendable, CustomStringConvertible {
    /// What the session knows about the publish.
    ///
    /// These two cases are all there will be: a refusal is an error, not a receipt.
    @frozen
    public enum Confirmation: Hashable, Sendable {
        /// The server acknowledged it (Tether's `ok`, a GraphQL mutation's result, a Socket.IO
        /// ack).
        case acknowledged
        /// It went on the wire; the protocol has no acknowledgement for it (a Socket.IO event
        /// without an ack). It may or may not have been applied.
        case sentUnconfirmed
    }

    /// Whether the server confirmed the publish.
    public var confirmation: Confirmation
    /// Where the message stands in its channel's stream, where the server said (Tether).
    public var position: StreamPosition?
    /// The message's sequence number, where the protocol numbers messages (Tether).
    public var sequence: UInt64? {
        get { position?.sequence }
        set { position = newValue.map(StreamPosition.sequence) }
    }
    /// The server's answer, where it sent one: on graphql-transport-ws the mutation's whole
    /// result, the `next` message's `payload` (`{"data": …}`, with `errors` where the server sent
    /// some); on Socket.IO the ack's arguments.
    public var response: JSONValue?

    /// A receipt with a sequence number (for tests and custom protocols).
    public init(_ confirmation: Confirmation, sequence: UInt64? = nil, response: JSONValue? = nil) {
        self.init(confirmation, position: sequence.map(StreamPosition.sequence), response: response)
    }

    /// A receipt with a stream position (for tests and custom protocols).
    public init(_ confirmation: Confirmation, position: StreamPosition?, response: JSONValue? = nil) {
        self.confirmation = confirmation
        self.position = position
        self.response = response
    }

    /// Indicates that the server acknowledged the publish.
    public var isAcknowledged: Bool { confirmation == .acknowledged }

    public var description: String {
        switch confirmation {
        case .acknowledged: "acknowledged" + (sequence.map { " #\($0)" } ?? position.map { " at \($0)" } ?? "")
        case .sentUnconfirmed: "sent, not confirmed"
        }
    }
}

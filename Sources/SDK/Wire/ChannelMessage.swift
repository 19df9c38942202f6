/// A message on a channel. On Tether's protocol the server numbers them: sequence numbers per
/// channel start at 1 and increase by one, so the session delivers each exactly once and in
/// order, and a resubscribe catches up from the last one. Protocols that do not number messages
/// (graphql-transport-ws, Socket.IO) deliver them with `sequence` `nil`, as the server sent them.
/// On MQTT the broker numbers nothing either, but its persistent session resumes: the session
/// numbers each subscription's deliveries itself (1, 2, …, continuing across reconnects), so a
/// resume's catch-up is counted — numbers local to this session, not the broker's.
public struct ChannelMessage: Hashable, Sendable {
    /// The channel it was published on.
    public var channel: String
    /// Where the message stands in its channel's stream, in the protocol's own terms (`nil`
    /// where the protocol places messages nowhere: graphql-transport-ws, Socket.IO).
    public var position: StreamPosition?
    /// The server's sequence number, where the protocol numbers messages (MQTT: the session's
    /// count of the subscription's deliveries).
    public var sequence: UInt64? {
        get { position?.sequence }
        set { position = newValue.map(StreamPosition.sequence) }
    }
    /// What was sent: Tether's `data`; on graphql-transport-ws the `next` message's whole
    /// `payload` (`{"data": …}`, with `errors` where the server sent some); on Socket.IO the
    /// message event's argument; on MQTT `{"topic", "payload"}`.
    public var data: JSONValue
    /// Indicates that an earlier launch of the app was handed this message and did not finish
    /// it before it was killed (with a store: <doc:Durability>). A message counts as finished
    /// when the app asks its ``Subscription`` for the next one.
    public var isRedelivery = false

    /// A message on `channel` with its sequence number (for tests and custom protocols).
    public init(channel: String, sequence: UInt64?, data: JSONValue) {
        self.init(channel: channel, position: sequence.map(StreamPosition.sequence), data: data)
    }

    /// A message on `channel` at `position` (for tests and custom protocols).
    public init(channel: String, position: StreamPosition?, data: JSONValue) {
        self.channel = channel
        self.position = position
        self.data = data
    }
}

public import Foundation

/// A publish an earlier launch of the app made, whose `await` died with that process: the
/// session goes on with it, and the app follows it here (``Session/earlierPublishes``,
/// ``Session/earlierPublishOutcomes``).
public struct EarlierPublish: Sendable, Hashable, Identifiable, CustomStringConvertible {
    /// Where it got.
    ///
    /// These four cases are all there will be.
    @frozen
    public enum State: Sendable, Hashable {
        /// It waits in the outbox: it is sent, in order, once connected.
        case waiting
        /// It went on the wire and its answer was lost with the process, on a protocol that
        /// cannot tell a re-send from a new publish: it is not re-sent blindly. The app decides:
        /// ``Session/retryPublish(_:)`` or ``Session/dismissPublish(_:)``.
        case mayHaveBeenApplied
        /// The server acknowledged it.
        case acknowledged(PublishReceipt)
        /// It failed (``SessionError``).
        case failed(SessionError)
    }

    /// Its idempotency key: the same for every send of it, across launches.
    public let id: String
    /// The channel it was published to.
    public let channel: String
    /// The data that was published.
    public let data: JSONValue
    /// When the app made it (wall clock).
    public let createdAt: Date
    /// Where it stands now.
    public var state: State

    public var description: String { "publish \(id) to \(channel): \(state)" }
}

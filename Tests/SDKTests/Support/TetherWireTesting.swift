import ConnectionPolicy
import SDK
import Testing

/// What the tests of Tether's machine share: the client messages an action list sends, the frame
/// of a server message, and the resumes of a list of channels.
protocol TetherWireTesting {
    var codec: JSONWireCodec { get }
}

extension TetherWireTesting {
    /// The client messages sent among `actions`; every other action must be exactly `others`.
    func sent(_ actions: [WireAction], besides others: [WireAction] = [], sourceLocation: SourceLocation = #_sourceLocation) -> [ClientMessage] {
        frames(of: actions, besides: others, sourceLocation: sourceLocation).compactMap { try? codec.decodeClientMessage($0) }
    }

    func frame(_ message: ServerMessage) -> TransportFrame { try! codec.encode(message) }

    func resume(_ channels: [(String, UInt64?)]) -> [WireResume] {
        channels.map { WireResume(topic: Topic($0.0), position: $0.1.map(StreamPosition.sequence)) }
    }
}

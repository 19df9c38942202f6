import ConnectionPolicy
import Foundation

// The shape every protocol adapter has (see docs/ARCHITECTURE.md): a stateless description
// chosen once, and a pure per-connection machine made fresh for every socket. The machine reads
// no clock, starts no task and does no I/O: frames, the core's commands and timer fires go in;
// actions come out, and the session core carries them out. `package`: an app chooses a protocol
// through `ServerProtocol`, and does not write a machine of its own.

/// Identifies one of the app's subscriptions, for the life of the session (across sockets).
package typealias SubscriptionID = UInt64

/// One socket's protocol state machine. Pure: made fresh for every socket, never reused.
package protocol WireMachine: Sendable {
    /// The socket is open: what to send first (the credentials, for a client-first protocol).
    mutating func start(credentials: Secret?) -> [WireAction]
    /// A frame arrived (it may hold any number of messages, or part of one).
    mutating func receive(_ frame: TransportFrame) -> [WireAction]
    /// The frames of one read, in order: what ``receive(_:)`` answers for each, in order, in
    /// one array. Default: ``receive(_:)`` frame by frame. The core carries the actions out
    /// after the last frame; nothing a machine decides for one frame depends on what the core
    /// does with the actions of an earlier frame of the same read (it answers frames already
    /// received, and its commands only add requests to be answered later).
    mutating func receive(contentsOf frames: [TransportFrame]) -> [WireAction]
    mutating func perform(_ command: WireCommand) -> [WireAction]
    mutating func timerFired(_ timer: WireTimer) -> [WireAction]
    /// The protocol's own keep-alive may be `factor` times its configured interval
    /// (`Liveness.keepAliveStretch`), within what its servers tolerate; 1: as configured.
    /// Told before ``start(credentials:)`` and at every change.
    mutating func keepAliveStretched(by factor: Int) -> [WireAction]
    /// State the protocol keeps for the session rather than for one socket (MQTT's client id,
    /// its un-acknowledged publishes, the subscriptions the broker holds): the core takes it when
    /// the socket ends and hands it to the next socket's machine
    /// (``WireProtocolDescription/makeConnectionMachine(continuing:)``), encoded, so that it
    /// can also be stored. Default: none.
    var sessionState: WireSessionState? { get }
    /// What of ``sessionState`` outlives the process, for a store: a relaunch continues from
    /// it (default: all of it).
    var durableSessionState: WireSessionState? { get }
}

extension WireMachine {
    package var sessionState: WireSessionState? { nil }
    /// By default the protocol has no keep-alive of its own to stretch.
    package mutating func keepAliveStretched(by factor: Int) -> [WireAction] { [] }
    package var durableSessionState: WireSessionState? { sessionState }

    package mutating func receive(contentsOf frames: [TransportFrame]) -> [WireAction] {
        var actions: [WireAction] = []
        for frame in frames { actions += receive(frame) }
        return actions
    }
}

extension CharacterSet {
    /// RFC 3986's unreserved characters: what a query value may hold unencoded.
    static let urlUnreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}

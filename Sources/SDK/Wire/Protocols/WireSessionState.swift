package import Foundation

/// A protocol's state for the session rather than for one socket (``WireMachine/sessionState``),
/// as the protocol encoded it: the core hands it from one socket's machine to the next, and a
/// store keeps it across launches, without knowing its type. Only its protocol decodes it
/// (``decoded(as:)``), so a protocol added later is kept without touching the core or the store.
package struct WireSessionState: Hashable, Sendable, Codable {
    /// The state's type and format, named by its protocol (`mqtt-session/1`).
    package let kind: String
    /// Its encoding (JSON).
    package let data: Data
    /// The value it was made from, when made in this process: handed to the next socket's
    /// machine without decoding (a thousand-member resume set was decoded at every reconnect).
    /// Not part of its identity or its encoding: `kind` and `data` are.
    private var value: (any WireSessionStateValue)?

    private enum CodingKeys: String, CodingKey { case kind, data }

    /// Encodes `state`. The states are plain values (strings, integers, collections of them):
    /// encoding them cannot fail, so a failure is a bug in the protocol's type.
    package init<State: WireSessionStateValue>(_ state: State) {
        kind = State.kind
        do {
            data = try state.encodedData()
        } catch {
            preconditionFailure("\(State.kind) does not encode: \(error)")
        }
        value = state
    }

    package init(kind: String, data: Data) {
        self.kind = kind
        self.data = data
    }

    /// The state, if it is one of `type`'s kind; throws when it is but does not decode (a
    /// damaged store), so that the caller can say the state was lost rather than start afresh
    /// in silence.
    package func decoded<State: WireSessionStateValue>(as type: State.Type) throws -> State? {
        guard kind == State.kind else { return nil }
        if let value = value as? State { return value }
        return try State.decoded(from: data)
    }

    package static func == (lhs: Self, rhs: Self) -> Bool { lhs.kind == rhs.kind && lhs.data == rhs.data }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(data)
    }
}

/// A protocol's own session state type: a Codable value with the name of its format.
package protocol WireSessionStateValue: Codable, Sendable {
    /// The type and format version (`mqtt-session/1`): a format that changes gets a new one.
    static var kind: String { get }
    /// The state as JSON: `JSONEncoder`'s, unless the type writes the same faster itself.
    func encodedData() throws -> Data
    /// A state from its JSON: `JSONDecoder`'s, unless the type reads it faster itself.
    static func decoded(from data: Data) throws -> Self
}

extension WireSessionStateValue {
    package func encodedData() throws -> Data { try JSONEncoder().encode(self) }
    package static func decoded(from data: Data) throws -> Self { try JSONDecoder().decode(Self.self, from: data) }
}

extension WireProtocolDescription {
    /// `state` as `type`, or `nil` (a new session) when there is none or it is another
    /// protocol's. One that does not decode is dropped — its loss logged by the caller that
    /// read it from a store; in memory the core only ever hands back what the machine gave.
    package func continuing<State: WireSessionStateValue>(_ state: WireSessionState?, as type: State.Type) -> State? {
        guard let state else { return nil }
        return try? state.decoded(as: type)
    }
}

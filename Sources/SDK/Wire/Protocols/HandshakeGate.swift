/// The shape every protocol machine shares around its handshake, written once: a machine is
/// handshaking (in one of its own `Step`s), ready, or ended. Commands that come while it is
/// handshaking wait, in order — sending them earlier would break the protocol (graphql-transport-ws
/// closes 4401) — unless the protocol takes them behind its handshake (Tether's pipelining);
/// the handshake's end releases them; once ended, nothing is done. A goodbye before the
/// handshake is done has nothing to say.
package struct HandshakeGate<Step: Hashable & Sendable>: Sendable {
    package enum Phase: Hashable, Sendable {
        case handshaking(Step)
        case ready
        case ended
    }

    package private(set) var phase: Phase
    private var held: [WireCommand] = []

    package init(_ first: Step) {
        phase = .handshaking(first)
    }

    /// The handshake's step now (`nil` once ready or ended).
    package var step: Step? {
        if case .handshaking(let step) = phase { step } else { nil }
    }

    package var isReady: Bool { phase == .ready }
    package var isEnded: Bool { phase == .ended }

    /// The handshake moved on to `step` (only while handshaking).
    package mutating func advance(to step: Step) {
        guard case .handshaking = phase else { return }
        phase = .handshaking(step)
    }

    /// Indicates that `command` may be carried out now. Handshaking, it is held for
    /// ``open()`` — unless `passes` (the protocol takes it behind its handshake); ended, it is
    /// dropped.
    package mutating func admits(_ command: WireCommand, passes: Bool = false) -> Bool {
        switch phase {
        case .ready:
            return true
        case .ended:
            return false
        case .handshaking:
            if passes { return true }
            if case .goodbye = command { return false }
            held.append(command)
            return false
        }
    }

    /// The handshake is done: the commands held, oldest first, to carry out now.
    package mutating func open() -> [WireCommand] {
        guard case .handshaking = phase else { return [] }
        phase = .ready
        defer { held = [] }
        return held
    }

    /// The connection ended (a failure, a close, a goodbye): nothing more is done.
    package mutating func end() {
        phase = .ended
        held = []
    }
}

import Foundation
import SDK

/// Drives a protocol adapter's pure machine over a real WebSocket, the way the session core
/// will: frames from the socket go into the machine, its `send`s go onto the socket, its other
/// actions are handed to the test, in order. Timers are recorded, not run (a test fires one with
/// ``fire(_:)``). Every wait has a deadline.
actor MachineDriver<Machine: WireMachine> {
    struct Timeout: Error, CustomStringConvertible {
        let description: String
    }

    private var machine: Machine
    private let connection: any TransportConnection
    private let inbox = EventInbox()
    private let pump: Task<Void, Never>
    private var actions: [WireAction] = []
    /// Every frame the machine sent, in order.
    private(set) var sent: [TransportFrame] = []
    /// The timers armed now, with their delays.
    private(set) var armed: [WireTimer: Duration] = [:]
    /// How the connection ended: the close the server sent, if it did.
    private(set) var serverClose: (code: CloseCode?, reason: String)?

    init(_ machine: Machine, over connection: any TransportConnection) {
        self.machine = machine
        self.connection = connection
        // One reader of the connection's events, for its whole life: a wait that times out
        // must not cancel the stream's reader (that would end the stream).
        pump = Task { [inbox] in
            for await event in connection.events { inbox.append(event) }
            inbox.append(nil)
        }
    }

    func start(credentials: Secret?) async throws {
        try await carry(machine.start(credentials: credentials))
    }

    func perform(_ command: WireCommand) async throws {
        try await carry(machine.perform(command))
    }

    func fire(_ timer: WireTimer) async throws {
        try await carry(machine.timerFired(timer))
    }

    /// The next action that is not a send or a timer (those are carried out), reading the
    /// socket as needed; nil once the connection has ended.
    func next(within limit: Duration = .seconds(10)) async throws -> WireAction? {
        let deadline = ContinuousClock.now + limit
        while actions.isEmpty {
            guard serverClose == nil else { return nil }
            guard ContinuousClock.now < deadline else { throw Timeout(description: "no action within \(limit); sent \(sent)") }
            let remaining = deadline - .now
            let (taken, signal) = inbox.take()
            let event: TransportEvent??
            if let taken {
                event = .some(taken)
            } else {
                _ = await signal.wait(upTo: remaining)
                continue
            }
            switch event {
            case .none: continue
            case .some(.none): serverClose = (nil, "the connection's events ended")
            case .some(.some(.frame(let frame))): try await carry(machine.receive(frame))
            case .some(.some(.closed(let code, let reason))): serverClose = (code, reason)
            }
        }
        return actions.removeFirst()
    }

    /// Waits for an action matching `predicate`, skipping others; throws if the connection ends.
    func next(where predicate: (WireAction) -> Bool, within limit: Duration = .seconds(10)) async throws -> WireAction {
        let deadline = ContinuousClock.now + limit
        while let action = try await next(within: max(deadline - .now, .milliseconds(1))) {
            if predicate(action) { return action }
        }
        throw Timeout(description: "the connection ended (\(serverClose.map { "\($0.code.map(String.init(describing:)) ?? "no code") \($0.reason)" } ?? "?")) before the awaited action")
    }

    /// Waits until the server ends the connection; returns its close.
    func serverEnd(within limit: Duration = .seconds(10)) async throws -> (code: CloseCode?, reason: String) {
        let deadline = ContinuousClock.now + limit
        while serverClose == nil {
            _ = try await next(within: max(deadline - .now, .milliseconds(1)))
        }
        return serverClose!
    }

    func close() async {
        await connection.close(code: .normal, reason: "test done")
        pump.cancel()
    }

    private func carry(_ produced: [WireAction]) async throws {
        for action in produced {
            switch action {
            case .send(let frame):
                sent.append(frame)
                try await connection.send(frame)
            case .arm(let timer, let delay):
                armed[timer] = delay
            case .cancel(let timer):
                armed[timer] = nil
            case .end(let ending):
                actions.append(action)
                await connection.close(code: ending.closeCode, reason: "ended by the machine")
            default:
                actions.append(action)
            }
        }
    }
}

/// The connection's events as they came, with a signal of the next one.
private final class EventInbox: Sendable {
    private struct State {
        /// `.some(nil)`: the events ended.
        var events: [TransportEvent?] = []
        var signal = OneShot()
    }

    private let state = Locked(State())

    func append(_ event: TransportEvent?) {
        let signal = state.withLock { state in
            state.events.append(event)
            defer { state.signal = OneShot() }
            return state.signal
        }
        signal.fire()
    }

    /// The oldest event not taken yet (`.some(nil)`: the end), and the signal of the next.
    func take() -> (TransportEvent??, OneShot) {
        state.withLock { state in
            (state.events.isEmpty ? nil : .some(state.events.removeFirst()), state.signal)
        }
    }
}

import Foundation
import SDK

/// Drives a protocol adapter's pure machine over a real WebSocket, the way the session core
/// does: frames from the socket go into the machine as they arrive (so the server's pings are
/// answered whether or not the test is reading), its `send`s go onto the socket in order, its
/// other actions are kept for the test, in order. Timers are recorded, not run (a test fires one
/// with ``fire(_:)``). Every wait has a deadline.
actor MachineDriver<Machine: WireMachine> {
    struct Timeout: Error, CustomStringConvertible {
        let description: String
    }

    private var machine: Machine
    private let connection: any TransportConnection
    private var pump: Task<Void, Never>?
    private var actions: [WireAction] = []
    /// Fired when an action is kept or the connection ends.
    private var changed = OneShot()
    /// Frames the machine sent that are not on the socket yet, and whether a caller is writing
    /// them (one writer at a time keeps them in order).
    private var unsent: [TransportFrame] = []
    private var writing = false
    /// What the first failed write threw: every later send fails with it.
    private var writeFailure: (any Error)?
    /// The machine ended the connection: closed with this code once the frames before are written.
    private var closeAfterWriting: CloseCode?
    /// Every frame the machine sent, in order.
    private(set) var sent: [TransportFrame] = []
    /// The timers armed now, with their delays.
    private(set) var armed: [WireTimer: Duration] = [:]
    /// How the connection ended: the close the server sent, if it did.
    private(set) var serverClose: (code: CloseCode?, reason: String)?

    init(_ machine: Machine, over connection: any TransportConnection) {
        self.machine = machine
        self.connection = connection
    }

    func start(credentials: Secret?) async throws {
        // One reader of the connection's events for its whole life, started with the machine:
        // a wait that times out must not cancel the stream's reader (that would end the stream).
        if pump == nil {
            let events = connection.events
            pump = Task { [weak self] in
                for await event in events { await self?.arrived(event) }
                await self?.arrived(nil)
            }
        }
        try await carry(machine.start(credentials: credentials))
    }

    func perform(_ command: WireCommand) async throws {
        try await carry(machine.perform(command))
    }

    func fire(_ timer: WireTimer) async throws {
        try await carry(machine.timerFired(timer))
    }

    /// The next action that is not a send or a timer (those are carried out); nil once the
    /// connection has ended and every action was taken.
    func next(within limit: Duration = .seconds(10)) async throws -> WireAction? {
        let deadline = ContinuousClock.now + limit
        while actions.isEmpty {
            guard serverClose == nil else { return nil }
            guard ContinuousClock.now < deadline else { throw Timeout(description: "no action within \(limit); sent \(sent)") }
            _ = await changed.wait(upTo: deadline - .now)
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
        pump?.cancel()
    }

    /// An event from the socket (nil: the events ended).
    private func arrived(_ event: TransportEvent?) async {
        switch event {
        case .frame(let frame)?:
            // A write that fails here shows as the connection's end (its close event follows).
            try? await carry(machine.receive(frame))
        case .closed(let code, let reason)?:
            if serverClose == nil { serverClose = (code, reason) }
        case nil:
            if serverClose == nil { serverClose = (nil, "the connection's events ended") }
        }
        changed.fire()
        changed = OneShot()
    }

    private func carry(_ produced: [WireAction]) async throws {
        var kept = false
        for action in produced {
            switch action {
            case .send(let frame):
                sent.append(frame)
                unsent.append(frame)
            case .arm(let timer, let delay):
                armed[timer] = delay
            case .cancel(let timer):
                armed[timer] = nil
            case .end(let ending):
                actions.append(action)
                kept = true
                closeAfterWriting = ending.closeCode
            default:
                actions.append(action)
                kept = true
            }
        }
        if kept {
            changed.fire()
            changed = OneShot()
        }
        try await writeUnsent()
    }

    /// Writes the frames not written yet, in order, then the machine's close if it ended; a
    /// caller that finds another writing leaves its frames (and the close) to that one.
    private func writeUnsent() async throws {
        if let writeFailure { throw writeFailure }
        guard !writing else { return }
        writing = true
        defer { writing = false }
        while !unsent.isEmpty {
            let frame = unsent.removeFirst()
            do {
                try await connection.send(frame)
            } catch {
                writeFailure = error
                unsent = []
                throw error
            }
        }
        if let code = closeAfterWriting {
            closeAfterWriting = nil
            await connection.close(code: code, reason: "ended by the machine")
        }
    }
}

@testable import SDK
import SDKTesting
import Testing

/// A wait that never sees its status fails — fast, saying what it waited for, where, and what it
/// saw — instead of running into the suite's time limit. The patience here ends when the test
/// says so (a gate), so nothing depends on real time.
@Suite("StatusRecorder: patience", .timeLimit(.minutes(1)))
struct StatusRecorderPatienceTests {
    let clock = TestClock()
    let server = TestServer()

    /// A recorder whose every wait's patience runs out once `gate` fires.
    static func recorder(_ session: Session, gate: OneShot) -> StatusRecorder {
        StatusRecorder(session, patience: .seconds(10)) { _ in
            await gate.wait()
            try Task.checkCancellation()
        }
    }

    @Test("a wait for a status that never comes throws, naming the status, the call site and the statuses seen")
    func timesOut() async throws {
        let session = Session(settings: try .testing(auto: false), transport: server.transport(), clock: clock)
        try await withRunningSession(session) { _ in
            let gate = OneShot()
            let recorder = Self.recorder(session, gate: gate)
            gate.fire()
            let error = await #expect(throws: StatusRecorderError.self) { try await recorder.waitFor(.connected) }
            #expect(error?.reason == .timedOut(after: .seconds(10)))
            #expect(error?.expected == "connected")
            #expect(error?.passed == [.disconnected(.notStarted)], "it read the status it began with")
            #expect(error?.file.hasSuffix("StatusRecorderTests+Patience.swift") == true)
            #expect(error?.description.contains("waited for connected") == true, "\(String(describing: error))")
        }
    }

    @Test("a wait that matches in time returns what it passed; once the patience ends, a wait with nothing to read throws instead of hanging")
    func matchesInTime() async throws {
        let session = Session(settings: try .testing(auto: false), transport: server.transport(), clock: clock)
        try await withRunningSession(session) { _ in
            let gate = OneShot()
            let recorder = Self.recorder(session, gate: gate)
            try await session.connect()
            let passed = try await recorder.waitFor(.connected)
            #expect(passed == [.disconnected(.notStarted), .connecting, .connected])
            gate.fire()
            // Every later wait's patience ends at once too: only what is already there matches.
            #expect(await recorder.drain().isEmpty)
            let error = await #expect(throws: StatusRecorderError.self) { try await recorder.next() }
            #expect(error?.reason == .timedOut(after: .seconds(10)))
            #expect(error?.history == [.disconnected(.notStarted), .connecting, .connected])
        }
    }

    @Test("a predicate wait names itself as such; a session that ends first is .ended, not a timeout")
    func endedFirst() async throws {
        let session = Session(settings: try .testing(auto: false), transport: server.transport(), clock: clock)
        let recorder = Self.recorder(session, gate: OneShot())
        try await withRunningSession(session) { _ in }
        let error = await #expect(throws: StatusRecorderError.self) {
            try await recorder.waitFor { if case .reconnecting = $0 { true } else { false } }
        }
        #expect(error?.reason == .ended)
        #expect(error?.expected == "a status matching the predicate")
        #expect(error?.passed.last == .disconnected(.sessionEnded))
    }
}

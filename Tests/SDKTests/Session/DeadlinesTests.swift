@testable import SDK
import SDKTesting
import Testing

/// The deadlines of a set of requests under one timer, table by table: what each change does to
/// the timer, and what a fire expires.
@Suite("Session.Deadlines: one timer for many requests")
struct DeadlinesTests {
    typealias Deadlines = Session.Deadlines
    let clock = SessionClock(TestClock())

    private func add(_ deadlines: inout Deadlines, _ id: RequestID, _ seconds: Int64) -> Deadlines.TimerChange {
        deadlines.add(id, deadline: clock.now.advanced(by: .seconds(seconds)), timeout: .seconds(seconds), remaining: .seconds(seconds))
    }

    @Test("adding: the first arms; a later deadline keeps the timer; an earlier one re-arms it")
    func adding() {
        var deadlines = Deadlines()
        #expect(add(&deadlines, 1, 10) == .arm(.seconds(10)))
        #expect(add(&deadlines, 2, 20) == .keep)
        #expect(add(&deadlines, 3, 10) == .keep)
        #expect(add(&deadlines, 4, 5) == .arm(.seconds(5)))
    }

    @Test("removing: the timer stays while any deadline is left, and is cancelled with the last; an unknown id changes nothing")
    func removing() {
        var deadlines = Deadlines()
        _ = add(&deadlines, 1, 10)
        _ = add(&deadlines, 2, 20)
        #expect(deadlines.remove(9) == .keep)
        #expect(deadlines.remove(1) == .keep)
        #expect(deadlines.remove(2) == .cancel)
        #expect(deadlines.isEmpty)
        #expect(deadlines.remove(2) == .keep)
        // With the set empty again, the next one arms afresh.
        #expect(add(&deadlines, 3, 30) == .arm(.seconds(30)))
    }

    @Test("a fire expires what is due, oldest first (ties by id), and re-arms for the earliest left")
    func firing() {
        var deadlines = Deadlines()
        _ = add(&deadlines, 5, 10)
        _ = add(&deadlines, 2, 10)
        _ = add(&deadlines, 3, 4)
        _ = add(&deadlines, 4, 30)
        let now = clock.now.advanced(by: .seconds(10))
        let (expired, timer) = deadlines.expire { deadline in deadline == now ? .zero : (deadline < now ? .seconds(-1) : .seconds(5)) }
        #expect(expired.map(\.id) == [3, 2, 5])
        #expect(expired.map(\.timeout) == [.seconds(4), .seconds(10), .seconds(10)])
        #expect(timer == .arm(.seconds(5)))
        #expect(deadlines.entries.keys.sorted() == [4])
        // The re-armed timer covers a later addition.
        #expect(add(&deadlines, 6, 100) == .keep)
    }

    @Test("a fire with nothing due expires nothing and arms for the earliest; with nothing left it leaves the timer off")
    func firingEarly() {
        var deadlines = Deadlines()
        _ = add(&deadlines, 1, 10)
        let early = deadlines.expire { _ in .seconds(3) }
        #expect(early.expired.isEmpty)
        #expect(early.timer == .arm(.seconds(3)))
        let due = deadlines.expire { _ in .zero }
        #expect(due.expired.map(\.id) == [1])
        #expect(due.timer == .keep)
        #expect(deadlines.isEmpty)
        #expect(add(&deadlines, 2, 1) == .arm(.seconds(1)))
    }
}

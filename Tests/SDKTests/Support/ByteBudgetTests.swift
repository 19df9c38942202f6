@testable import SDK
import Testing

/// The budget between a socket's reader and the session's funnel: a read goes when it fits (or
/// when nothing is in flight, however large); past the budget the reader waits, and goes on once
/// enough is given back; a reader let go stops waiting.
@Suite("ByteBudget: what the funnel holds of a socket's reads", .timeLimit(.minutes(1)))
struct ByteBudgetTests {
    /// A budget whose reader's waits can be awaited, in order.
    struct Watched {
        let budget: ByteBudget
        let waits: AsyncStream<Void>

        init(limit: Int) {
            let (waits, waited) = AsyncStream<Void>.makeStream()
            self.waits = waits
            budget = ByteBudget(limit: limit) { waited.yield() }
        }
    }

    @Test("reads that fit go at once; one bigger than the whole budget goes when nothing is in flight")
    func fits() async {
        let budget = ByteBudget(limit: 100)
        await budget.acquire(60)
        await budget.acquire(40)
        #expect(budget.inFlight == 100)
        budget.release(100)
        await budget.acquire(5_000)
        #expect(budget.inFlight == 5_000, "alone, a read larger than the budget is not held forever")
        budget.release(5_000)
        await budget.acquire(0)
        #expect(budget.inFlight == 0)
    }

    @Test("past the budget the reader waits, and goes on once what was handled is given back — counted in flight then")
    func waitsForRoom() async {
        let watched = Watched(limit: 100)
        await watched.budget.acquire(80)
        let (first, reader) = await Self.read(30, from: watched)
        #expect(first == "waited", "30 more is past 100: it waits")
        #expect(watched.budget.inFlight == 80, "waiting: not counted yet")
        watched.budget.release(5)
        #expect(watched.budget.inFlight == 75, "75 + 30 is past 100: it still waits")
        watched.budget.release(15)
        await reader.value
        #expect(watched.budget.inFlight == 90, "60 + 30 fits: it went, counted")
    }

    /// Whether a reader of `bytes` begins to wait before it goes on (one that never waits goes
    /// first), and the reader, to await once the test has given room back.
    static func read(_ bytes: Int, from watched: Watched) async -> (first: String, reader: Task<Void, Never>) {
        let (went, wentOn) = AsyncStream<Void>.makeStream()
        let reader = Task {
            await watched.budget.acquire(bytes)
            wentOn.yield()
        }
        let first = await withTaskGroup(of: String.self) { group in
            for (stream, name) in [(watched.waits, "waited"), (went, "went")] {
                group.addTask {
                    var iterator = stream.makeAsyncIterator()
                    return await iterator.next() == nil ? "" : name
                }
            }
            let first = await group.next() ?? ""
            group.cancelAll()  // the other stream's wait ends with it
            return first
        }
        return (first, reader)
    }

    @Test("a reader let go while it waits returns without counting its read")
    func cancelled() async {
        let watched = Watched(limit: 100)
        await watched.budget.acquire(90)
        let (first, reader) = await Self.read(50, from: watched)
        #expect(first == "waited")
        reader.cancel()
        await reader.value
        #expect(watched.budget.inFlight == 90)
    }
}

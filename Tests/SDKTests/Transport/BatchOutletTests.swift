@testable import SDK
import Testing

/// A batching connection's outlet: the reads wait until one reader attaches, then reach it in
/// order; a direct reader always ends with one `.closed`, even from a transport that ended its
/// reads without saying why.
@Suite("BatchOutlet: a transport's reads to its one reader")
struct BatchOutletTests {
    /// A direct reader that keeps what it was handed.
    final class Collector: Sendable {
        let batches = Locked<[[TransportEvent]]>([])
        var deliver: @Sendable ([TransportEvent]) -> Bool {
            { batch in
                self.batches.withLock { $0.append(batch) }
                return true
            }
        }
        var all: [[TransportEvent]] { batches.withLock { $0 } }
    }

    let a = TransportEvent.frame(.text("a"))
    let b = TransportEvent.frame(.text("b"))
    let c = TransportEvent.frame(.text("c"))

    @Test("reads that came before the reader attached reach it first, then the rest as they come")
    func waitingThenDirect() {
        let outlet = BatchOutlet()
        outlet.yield([a])
        outlet.yield([b])
        #expect(!outlet.isDirect)
        let reader = Collector()
        outlet.attach(reader.deliver)
        #expect(outlet.isDirect)
        #expect(reader.all == [[a], [b]])
        outlet.yield([c])
        #expect(reader.all == [[a], [b], [c]], "handed over in the transport's call: no task in between")
    }

    @Test("reads that end without a close end with one for a direct reader; nothing after a close is handed over")
    func endsWithOneClose() {
        let ended = TransportEvent.closed(code: nil, reason: "the transport's events ended")
        let early = BatchOutlet()
        early.yield([a])
        early.finish()
        let first = Collector()
        early.attach(first.deliver)
        #expect(first.all == [[a], [ended]])

        let late = BatchOutlet()
        let second = Collector()
        late.attach(second.deliver)
        late.yield([a, .closed(code: .normal, reason: "bye")])
        late.yield([b])
        late.finish()
        #expect(second.all == [[a, .closed(code: .normal, reason: "bye")]], "one close, then nothing")

        let silent = BatchOutlet()
        let third = Collector()
        silent.attach(third.deliver)
        silent.finish()
        silent.finish()
        #expect(third.all == [[ended]])
    }

    @Test("a stream reader gets the same reads, those that waited first, and the stream ends when the reads do")
    func streamReader() async {
        let outlet = BatchOutlet()
        outlet.yield([a])
        let stream = outlet.stream()
        outlet.yield([b, c])
        outlet.finish()
        var got: [[TransportEvent]] = []
        for await batch in stream { got.append(batch) }
        #expect(got == [[a], [b, c]])
    }

    @Test("what the reader took goes back to the transport as frame bytes")
    func takenBytes() {
        let taken = Locked(0)
        let outlet = BatchOutlet(onTaken: { bytes in taken.withLock { $0 += bytes } })
        outlet.taken([a, .frame(.binary([1, 2, 3])), .closed(code: nil, reason: "")])
        #expect(taken.withLock { $0 } == 4)
    }

    @Test("a reader that is gone is let go, and the read it refused goes back to the transport; a reader handed a close is let go too")
    func letsTheReaderGo() {
        let taken = Locked(0)
        let outlet = BatchOutlet(onTaken: { bytes in taken.withLock { $0 += bytes } })
        outlet.attach { _ in false }
        outlet.yield([a])
        outlet.yield([b])
        #expect(taken.withLock { $0 } == 1, "the refused read given back; nothing after it handed over")

        weak var released: Collector?
        let closing = BatchOutlet()
        do {
            let reader = Collector()
            released = reader
            closing.attach(reader.deliver)
            closing.yield([a, .closed(code: .normal, reason: "bye")])
            #expect(reader.all.count == 1)
        }
        #expect(released == nil, "the outlet keeps no reader after the close: a reader that holds the outlet makes no cycle")
    }
}

import SDK
import Testing
@testable import ReferenceServer

/// The reference server's writer queue: the writer takes everything queued at once, in order;
/// it ends once finished and drained, or cancelled.
@Suite("Reference server: the writer's queue", .timeLimit(.minutes(1)))
struct OutboundQueueTests {
    func frames(_ text: String) -> RealtimeServer.Outbound { .frames([.text(text)], at: .now) }

    func texts(_ items: [RealtimeServer.Outbound]?) -> [String] {
        (items ?? []).flatMap { item -> [String] in
            switch item {
            case .frames(let frames, _): frames.map { if case .text(let text) = $0 { text } else { "binary" } }
            case .close(let code, _): ["close \(code.rawValue)"]
            }
        }
    }

    @Test("what was queued while the writer was away is taken at once, in order; then it waits for more")
    func takesEverything() async {
        let queue = OutboundQueue()
        queue.yield(frames("a"))
        queue.yield(frames("b"))
        queue.yield(.close(.normal, reason: "bye"))
        #expect(texts(await queue.next()) == ["a", "b", "close 1000"])
        let waiting = Task { await queue.next() }
        queue.yield(frames("c"))
        #expect(texts(await waiting.value) == ["c"])
    }

    @Test("finished: what is queued is still taken, then nil; nothing is queued after")
    func finish() async {
        let queue = OutboundQueue()
        queue.yield(frames("a"))
        queue.finish()
        queue.yield(frames("after"))
        #expect(texts(await queue.next()) == ["a"])
        #expect(await queue.next() == nil)
        let waiting = OutboundQueue()
        let next = Task { await waiting.next() }
        waiting.finish()
        #expect(await next.value == nil)
    }

    @Test("a cancelled writer's wait ends with nil")
    func cancelled() async {
        let queue = OutboundQueue()
        let next = Task { await queue.next() }
        next.cancel()
        #expect(await next.value == nil)
    }
}

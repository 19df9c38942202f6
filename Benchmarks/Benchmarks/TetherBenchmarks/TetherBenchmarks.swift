import Benchmark
import ConnectionPolicy
import SDK
@_spi(Fuzzing) import SDKTesting

// The hot paths, each beside its baseline in the same run:
// - policy events (the pure state machine) — baseline: an empty loop of the same shape;
// - codec decode (+ dispatch) per inbound message, encode per outbound message, with
//   allocation counts — baseline: the bytes' UTF-8 validation alone (what any decoder pays);
// - session input handling per event (a host call through the funnel).

let inbound = TransportFrame.text(#"{"type":"message","channel":"room-1","seq":123456,"data":{"text":"hello, world","from":"ada","n":42}}"#)
let outbound: JSONValue = ["text": "hello, world", "from": "ada", "n": 42]

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        maxDuration: .seconds(2),
        maxIterations: 1_000_000
    )

    Benchmark("policy: background/foreground flip (Auto)") { benchmark in
        var policy = AutoPolicy(jitter: .fixed(0))
        var sink = 0
        _ = policy.start(in: PolicyContext(lifecycle: .active))
        _ = policy.connectionOpened()
        for _ in benchmark.scaledIterations {
            sink &+= policy.lifecycleChanged(to: .background).count
            sink &+= policy.lifecycleChanged(to: .active).count
            sink &+= policy.connectionOpened().count
        }
        blackHole(sink)
    }

    Benchmark("policy: baseline (an empty loop of the same shape)") { benchmark in
        var sink = 0
        for index in benchmark.scaledIterations { sink &+= index & 3 }
        blackHole(sink)
    }

    Benchmark("codec: decode an inbound message") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(CodecFuzzing.decodeServerFrame(inbound))
        }
    }

    Benchmark("codec: baseline (validate the frame's UTF-8)") { benchmark in
        guard case .text(let text) = inbound else { return }
        for _ in benchmark.scaledIterations {
            blackHole(String(validating: Array(text.utf8), as: UTF8.self))
        }
    }

    Benchmark("codec: encode an outbound publish") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(CodecFuzzing.encodePublish(outbound, to: "room-1"))
        }
    }

    Benchmark("session: a host call through the funnel (setAppState inactive/active)") { benchmark in
        let session = Session(settings: try AppSettings.testing(auto: false), transport: TestServer().transport(), clock: TestClock())
        for _ in benchmark.scaledIterations {
            await session.setAppState(.inactive)
            await session.setAppState(.active)
        }
    }
}

import Foundation
import ConnectionPolicy
import SDK
@_spi(Fuzzing) import SDKTesting
import Testing

/// Every input in Fuzz/adapters/<adapter>/{corpus,regressions} (hostile shapes, and any crash the
/// adapter fuzzer ever found) goes through the fuzz harness's check: no trap, and actions that
/// make sense (nothing after the end, no stray deliveries, each reply once).
@Suite("Protocol adapter fuzz regressions")
struct ProtocolFuzzRegressionTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/adapters")

    static var inputs: [String] {
        ProtocolFuzzing.Adapter.allCases.flatMap { adapter in
            ["corpus", "regressions"].flatMap { folder in
                let directory = root.appendingPathComponent(adapter.rawValue).appendingPathComponent(folder)
                return ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted().map { "\(adapter.rawValue)/\(folder)/\($0)" }
            }
        }
    }

    @Test("the inputs are there, for each adapter")
    func present() {
        for adapter in ProtocolFuzzing.Adapter.allCases {
            #expect(Self.inputs.filter { $0.hasPrefix(adapter.rawValue + "/regressions/") }.count >= 5, "\(adapter)")
        }
    }

    @Test("each input: no trap, and the machine's actions make sense", arguments: inputs)
    func replay(path: String) throws {
        let adapter = try #require(ProtocolFuzzing.Adapter(rawValue: String(path.prefix { $0 != "/" })))
        let bytes = try Data(contentsOf: Self.root.appendingPathComponent(path))
        #expect(ProtocolFuzzing.check(adapter, Array(bytes)) == nil)
    }

    @Test("the harness can fail: a second reply, an action after the end, a stray delivery, a second ready")
    func auditCatchesNonsense() {
        let reply = WireAction.replied(1, .success(.sentUnconfirmed))
        let cases: [[WireAction]] = [
            [.ready, reply, reply],
            [.ready, .end(WireEnding(.error("x"), .retry)), .send(.text("late"))],
            [.ready, .delivery(8, "x", position: nil)],
            [.ready, .ready],
        ]
        for actions in cases {
            var audit = ProtocolFuzzing.Audit()
            audit.requests = [1]
            audit.take(actions)
            #expect(audit.problem != nil, "\(actions)")
        }
        var fine = ProtocolFuzzing.Audit()
        fine.requests = [1]
        fine.take([.ready, .delivery(7, "x", position: nil), reply, .end(WireEnding(.error("x"), .retry))])
        #expect(fine.problem == nil)
    }
}

import Foundation
import SDK
@_spi(Fuzzing) import SDKTesting
import Testing

/// Every input in Fuzz/regressions (hostile shapes, and any crash the fuzzer ever found) is
/// decoded both ways: each gives a message that survives a round trip, or a typed CodecError.
@Suite("Codec fuzz regressions")
struct FuzzRegressionTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/regressions")

    static var inputs: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    @Test("the regression inputs are there")
    func present() {
        #expect(Self.inputs.count >= 7)
    }

    @Test("no regression input traps, and each decodes to a round-trippable message or a typed error", arguments: inputs)
    func replay(name: String) throws {
        let bytes = try Data(contentsOf: Self.directory.appendingPathComponent(name))
        // The fuzzer's own check (`CodecFuzzing`, what `Fuzz/`'s CodecFuzzer runs): the codec's
        // errors are typed (`throws(CodecError)`), so a refusal is always one; what decodes
        // must survive a round trip.
        let problem = CodecFuzzing.check(Array(bytes))
        #expect(problem == nil, "\(name): \(problem ?? "")")
    }
}

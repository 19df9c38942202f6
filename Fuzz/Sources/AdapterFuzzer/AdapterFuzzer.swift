import Foundation
import FuzzDriver
@_spi(Fuzzing) import SDKTesting

/// libFuzzer's entry for the protocol adapters: the adapter comes from the environment
/// (`TETHER_FUZZ_ADAPTER`: `graphql-transport-ws`, `socket.io`, `mqtt`, `phoenix` or `supabase-realtime`, set by
/// `.ci/fuzz-adapters`);
/// every input goes through ``ProtocolFuzzing/check(_:_:)``, and a problem is a crash.
let adapter = ProtocolFuzzing.Adapter(rawValue: ProcessInfo.processInfo.environment["TETHER_FUZZ_ADAPTER"] ?? "") ?? .graphQLTransportWS

@_cdecl("LLVMFuzzerTestOneInput")
public func adapterFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    if let problem = ProtocolFuzzing.check(adapter, Array(UnsafeBufferPointer(start: data, count: size))) {
        fatalError("\(adapter.rawValue): \(problem)")
    }
    return 0
}

/// SwiftPM makes `<Target>_main` the program's entry; it hands over to libFuzzer's driver.
@_cdecl("AdapterFuzzer_main")
public func adapterFuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { data, size in adapterFuzzerTestOneInput(data, size) }
}

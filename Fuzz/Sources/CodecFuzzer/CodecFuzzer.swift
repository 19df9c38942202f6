import FuzzDriver
@_spi(Fuzzing) import SDKTesting

/// libFuzzer's entry: every input is decoded as a server frame and as a client frame; nothing
/// may trap, and whatever decodes must survive an encode/decode round trip unchanged.
@_cdecl("LLVMFuzzerTestOneInput")
public func codecFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    if let problem = CodecFuzzing.check(Array(UnsafeBufferPointer(start: data, count: size))) { fatalError(problem) }
    return 0
}

/// SwiftPM makes `<Target>_main` the program's entry; it hands over to libFuzzer's driver.
@_cdecl("CodecFuzzer_main")
public func codecFuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { data, size in codecFuzzerTestOneInput(data, size) }
}

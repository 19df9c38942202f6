import FuzzDriver
import SDK

/// libFuzzer's entry: every input is decoded as a server frame and as a client frame; nothing
/// may trap, and whatever decodes must survive an encode/decode round trip unchanged.
@_cdecl("LLVMFuzzerTestOneInput")
public func codecFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let codec = JSONWireCodec(maxFrameBytes: 1 << 16, maxDepth: 32)
    let bytes = UnsafeBufferPointer(start: data, count: size)
    for frame in [TransportFrame.text(String(decoding: bytes, as: UTF8.self)), .binary(Array(bytes))] {
        if let message = try? codec.decode(frame) {
            guard let encoded = try? codec.encode(message), let again = try? codec.decode(encoded), again == message else {
                fatalError("server message did not survive a round trip: \(message)")
            }
        }
        if let message = try? codec.decodeClientMessage(frame) {
            guard let encoded = try? codec.encode(message), let again = try? codec.decodeClientMessage(encoded), again == message else {
                fatalError("client message did not survive a round trip: \(message)")
            }
        }
    }
    return 0
}

/// SwiftPM makes `<Target>_main` the program's entry; it hands over to libFuzzer's driver.
@_cdecl("CodecFuzzer_main")
public func codecFuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { data, size in codecFuzzerTestOneInput(data, size) }
}

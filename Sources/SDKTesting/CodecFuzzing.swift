public import SDK

/// Tether's codec for harnesses outside this package — the fuzzer (`Fuzz/`, `.ci/fuzz-codec`)
/// and the micro-benchmarks (`Benchmarks/`): Tether's own message types and codec are not
/// public, so they reach them through here. It is SPI, not part of what apps see: a harness
/// imports it with `@_spi(Fuzzing) import SDKTesting`.
@_spi(Fuzzing)
public enum CodecFuzzing {
    /// What was wrong with `bytes`, decoded as a server frame and as a client frame (text and
    /// binary), or `nil` when nothing was: nothing may trap, and whatever decodes must survive
    /// an encode/decode round trip unchanged.
    public static func check(_ bytes: [UInt8], maxFrameBytes: Int = 1 << 16, maxDepth: Int = 32) -> String? {
        let codec = JSONWireCodec(maxFrameBytes: maxFrameBytes, maxDepth: maxDepth)
        for frame in [TransportFrame.text(String(decoding: bytes, as: UTF8.self)), .binary(bytes)] {
            if let message = try? codec.decode(frame) {
                guard let encoded = try? codec.encode(message), let again = try? codec.decode(encoded), again == message else {
                    return "server message did not survive a round trip: \(message)"
                }
            }
            if let message = try? codec.decodeClientMessage(frame) {
                guard let encoded = try? codec.encode(message), let again = try? codec.decodeClientMessage(encoded), again == message else {
                    return "client message did not survive a round trip: \(message)"
                }
            }
        }
        return nil
    }

    /// Decodes `frame` as a server frame, as a session does for each one it reads: whether it
    /// decoded (for the micro-benchmarks).
    public static func decodeServerFrame(_ frame: TransportFrame) -> Bool {
        (try? JSONWireCodec().decode(frame)) != nil
    }

    /// Encodes a publish of `data` to `channel`, as a session does for each one it sends.
    public static func encodePublish(_ data: JSONValue, to channel: String, id: UInt64 = 99) -> TransportFrame? {
        try? JSONWireCodec().encode(ClientMessage.publish(id: id, channel: channel, data: data))
    }
}

import ConnectionPolicy
import SDK
import Testing

/// What the core asks of every protocol description, checked across the adapters.
@Suite("Protocol descriptions")
struct WireMachineTests {
    /// Nested 40 deep: past Tether's codec (32), nothing to another protocol.
    static let deep: JSONValue = (0..<40).reduce(JSONValue("leaf")) { inner, _ in ["a": inner] }

    @Test("the check before a publish is queued is the protocol's own: Tether's codec refuses what it cannot encode; the adapters' limits are their machines'")
    func encodingProblemIsTheProtocols() throws {
        let tether = try #require(TetherProtocol().encodingProblem(publishing: Self.deep, to: "room", key: "k"))
        #expect(tether.contains("deep"), "\(tether)")
        #expect(TetherProtocol().encodingProblem(publishing: ["text": "hi"], to: "room", key: "k") == nil)
        #expect(GraphQLTransportWS().encodingProblem(publishing: Self.deep, to: "post", key: "k") == nil)
        #expect(SocketIO().encodingProblem(publishing: Self.deep, to: "room", key: "k") == nil)
        #expect(MQTT().encodingProblem(publishing: Self.deep, to: "t", key: "k") == nil)
    }
}

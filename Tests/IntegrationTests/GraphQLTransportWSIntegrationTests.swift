import Foundation
import NIOTransport
import PeerServers
import SDK
import Testing

/// The graphql-transport-ws machine against a real, unmodified strawberry-graphql server
/// (Examples/PeerServers/Apps/graphql_app.py under uvicorn), over the NIO transport on loopback.
@Suite("graphql-transport-ws against strawberry-graphql", .timeLimit(.minutes(3)), .serialized)
struct GraphQLTransportWSIntegrationTests {
    func open(_ server: PeerServer) async throws -> any TransportConnection {
        try await NIOWebSocketTransport().open(url: URL(string: "ws://127.0.0.1:\(server.port)/graphql")!, headers: [:], subprotocols: [GraphQLTransportWS.subprotocol])
    }

    @Test("the subprotocol is negotiated; rejected credentials close 4403, read as credentialsRejected without retry")
    func rejected() async throws {
        try await PeerServer.withRunning(.graphQL) { server in
            let connection = try await open(server)
            #expect(connection.subprotocol == GraphQLTransportWS.subprotocol)
            let driver = MachineDriver(GraphQLTransportWS().makeMachine(), over: connection)
            try await driver.start(credentials: Secret("wrong"))
            let close = try await driver.serverEnd()
            #expect(close.code == CloseCode(4403))
            let ending = GraphQLTransportWS.ending(code: close.code, reason: close.reason)
            #expect(ending.reason.code == .credentialsRejected)
            #expect(ending.disposition == .doNotRetry)
            await driver.close()
        }
    }

    @Test("accepted: ready; a subscription delivers; a mutation is acknowledged with its result; ping is answered")
    func session() async throws {
        try await PeerServer.withRunning(.graphQL) { server in
            let driver = MachineDriver(GraphQLTransportWS().makeMachine(), over: try await open(server))
            try await driver.start(credentials: Secret("s3cret"))
            #expect(try await driver.next() == .ready)
            let ticks: JSONValue = ["query": "subscription($room: String!, $since: Int!) { ticks(room: $room, since: $since) }", "variables": ["room": "r1", "since": 41]]
            try await driver.perform(.subscribe(7, Topic("ticks", options: ticks), resume: nil))
            #expect(try await driver.next() == .subscribed(7, .live(at: nil)))
            #expect(try await driver.next() == .delivery(7, ["data": ["ticks": 42]], position: nil))
            #expect(try await driver.next() == .delivery(7, ["data": ["ticks": 43]], position: nil))
            try await driver.perform(.publish(3, Topic("post"), ["query": "mutation { post(text: \"hello\") }"], key: nil))
            let reply = try await driver.next { if case .replied = $0 { true } else { false } }
            #expect(reply == .replied(3, .success(.acknowledged(position: nil, payload: ["data": ["post": 5]]))))
            try await driver.perform(.ping(4))
            let pong = try await driver.next { if case .replied = $0 { true } else { false } }
            #expect(pong == .replied(4, .success(.acknowledged(position: nil, payload: nil))))
            try await driver.perform(.unsubscribe(7))
            try await driver.perform(.goodbye)
            await driver.close()
        }
    }

    @Test("a GraphQL error ends only its operation; the connection keeps working")
    func operationError() async throws {
        try await PeerServer.withRunning(.graphQL) { server in
            let driver = MachineDriver(GraphQLTransportWS().makeMachine(), over: try await open(server))
            try await driver.start(credentials: Secret("s3cret"))
            #expect(try await driver.next() == .ready)
            try await driver.perform(.publish(5, Topic("post"), ["query": "mutation { nope }"], key: nil))
            guard case .replied(5, .failure(let failure))? = try await driver.next() else {
                Issue.record("the bad mutation did not fail")
                return
            }
            #expect(failure.code == "graphql_error")
            // A resolver that raises: strawberry sends a next with errors (an execution error),
            // not an error message. It is a rejection all the same.
            try await driver.perform(.publish(7, Topic("post"), ["query": "mutation { fail }"], key: nil))
            guard case .replied(7, .failure(let raised))? = try await driver.next() else {
                Issue.record("the mutation whose resolver raised was not rejected")
                return
            }
            #expect(raised.code == "graphql_error")
            #expect(raised.message == "the resolver refused")
            #expect(raised.payload?["errors"]?.arrayValue?.count == 1)
            try await driver.perform(.ping(6))
            #expect(try await driver.next() == .replied(6, .success(.acknowledged(position: nil, payload: nil))))
            await driver.close()
        }
    }
}

import ConnectionPolicy
import SDK
import Testing

/// The graphql-transport-ws machine, table by table, from the transcript recorded against
/// strawberry-graphql 0.341.2 (`../shared/research/protocol-adapters.md`, A.4).
@Suite("graphql-transport-ws machine")
struct GraphQLTransportWSTests {
    static let ticks: JSONValue = ["query": "subscription($room: String!) { ticks(room: $room) }", "variables": ["room": "r1"]]
    static let post: JSONValue = ["query": "mutation { post(text: \"hi\") }"]

    func text(_ action: WireAction) -> String? {
        if case .send(.text(let text)) = action { text } else { nil }
    }

    /// A machine past `connection_ack`.
    func ready() -> GraphQLTransportWS.Machine {
        var machine = GraphQLTransportWS().makeMachine()
        expectKinds(machine.start(credentials: Secret("s3cret")), [.send])
        expectKinds(machine.receive(.text(#"{"type":"connection_ack","payload":{"welcome":true}}"#)), [.ready])
        return machine
    }

    @Test("connection_init carries the credentials; connection_ack makes it ready")
    func handshake() {
        var machine = GraphQLTransportWS().makeMachine()
        let start = machine.start(credentials: Secret("s3cret"))
        #expect(start.compactMap(text) == [#"{"payload":{"token":"s3cret"},"type":"connection_init"}"#])
        #expect(machine.receive(.text(#"{"type":"connection_ack","payload":{"welcome":true}}"#)) == [.ready])
    }

    @Test("commands before the ack wait for it (subscribing earlier would close 4401)")
    func commandsWaitForAck() {
        var machine = GraphQLTransportWS().makeMachine()
        expectKinds(machine.start(credentials: nil), [.send])
        #expect(machine.perform(.subscribe(7, Topic("ticks", options: Self.ticks), resume: nil)) == [])
        let actions = machine.receive(.text(#"{"type":"connection_ack"}"#))
        #expect(actions.first == .ready)
        #expect(actions.compactMap(text) == [#"{"id":"s1","payload":{"query":"subscription($room: String!) { ticks(room: $room) }","variables":{"room":"r1"}},"type":"subscribe"}"#])
        #expect(actions.last == .subscribed(7, .live(at: nil)))
    }

    @Test("subscribe: next → deliveries for that subscription; complete ends it; unsubscribe sends complete")
    func subscription() {
        var machine = ready()
        expectKinds(machine.perform(.subscribe(7, Topic("ticks", options: Self.ticks), resume: nil)), [.send, .subscribed])
        #expect(machine.receive(.text(#"{"id":"s1","type":"next","payload":{"data":{"ticks":42}}}"#)) == [.delivery(7, ["data": ["ticks": 42]], position: nil)])
        #expect(machine.receive(.text(#"{"id":"s9","type":"next","payload":{}}"#)) == [], "an unknown operation is ignored")
        #expect(machine.perform(.unsubscribe(7)).compactMap(text) == [#"{"id":"s1","type":"complete"}"#])
        #expect(machine.receive(.text(#"{"id":"s1","type":"next","payload":{"data":{"ticks":43}}}"#)) == [], "nothing after unsubscribing")
    }

    @Test("a resubscribe cannot resume: its outcome says so (refetch), with a fresh operation id")
    func resubscribeReportsResumeUnsupported() {
        var machine = ready()
        let actions = machine.perform(.subscribe(7, Topic("ticks", options: Self.ticks), resume: .opaque("41")))
        #expect(actions.last == .subscribed(7, .resumeUnsupported))
        #expect(machine.perform(.subscribe(8, Topic("other", options: "subscription { other }"), resume: nil)).compactMap(text)
            == [#"{"id":"s2","payload":{"query":"subscription { other }"},"type":"subscribe"}"#])
    }

    @Test("publish is a mutation: its next is the result, its complete the acknowledgement")
    func publishAsMutation() {
        var machine = ready()
        #expect(machine.perform(.publish(3, Topic("post"), Self.post, key: nil)).compactMap(text) == [#"{"id":"p1","payload":{"query":"mutation { post(text: \"hi\") }"},"type":"subscribe"}"#])
        #expect(machine.receive(.text(#"{"id":"p1","type":"next","payload":{"data":{"post":42}}}"#)) == [])
        #expect(machine.receive(.text(#"{"id":"p1","type":"complete"}"#)) == [.replied(3, .success(.acknowledged(position: nil, payload: ["data": ["post": 42]])))])
    }

    @Test("a mutation whose resolver failed (a next with errors, graphql-transport-ws's execution error) is rejected, not acknowledged")
    func mutationExecutionError() {
        var machine = ready()
        expectKinds(machine.perform(.publish(3, Topic("post"), Self.post, key: nil)), [.send])
        #expect(machine.receive(.text(#"{"id":"p1","type":"next","payload":{"data":null,"errors":[{"message":"boom","path":["post"]}]}}"#)) == [])
        let result: JSONValue = ["data": nil, "errors": [["message": "boom", "path": ["post"]]]]
        #expect(machine.receive(.text(#"{"id":"p1","type":"complete"}"#)) == [.replied(3, .failure(WireFailure(code: "graphql_error", message: "boom", payload: result)))])
        // An empty errors list is no error.
        expectKinds(machine.perform(.publish(4, Topic("post"), Self.post, key: nil)), [.send])
        #expect(machine.receive(.text(#"{"id":"p2","type":"next","payload":{"data":{"post":1},"errors":[]}}"#)).isEmpty)
        #expect(machine.receive(.text(#"{"id":"p2","type":"complete"}"#)) == [.replied(4, .success(.acknowledged(position: nil, payload: ["data": ["post": 1], "errors": []])))])
    }

    @Test("a subscription's next with errors is delivered as it came: the subscription goes on (graphql-ws's client does the same)")
    func subscriptionEventWithErrors() {
        var machine = ready()
        expectKinds(machine.perform(.subscribe(7, Topic("ticks", options: Self.ticks), resume: nil)), [.send, .subscribed])
        let event: JSONValue = ["data": nil, "errors": [["message": "one event failed"]]]
        #expect(machine.receive(.text(#"{"id":"s1","type":"next","payload":{"data":null,"errors":[{"message":"one event failed"}]}}"#)) == [.delivery(7, event, position: nil)])
    }

    @Test("an error ends only its operation")
    func errors() {
        var machine = ready()
        expectKinds(machine.perform(.subscribe(7, Topic("ticks", options: Self.ticks), resume: nil)), [.send, .subscribed])
        expectKinds(machine.perform(.publish(3, Topic("post"), Self.post, key: nil)), [.send])
        let failure = machine.receive(.text(#"{"id":"p2","type":"error","payload":[{"message":"not allowed"}]}"#))
        #expect(failure == [.replied(3, .failure(WireFailure(code: "graphql_error", message: "not allowed", payload: [["message": "not allowed"]])))])
        let subscriptionFailure = machine.receive(.text(#"{"id":"s1","type":"error","payload":[{"message":"bad room"},{"message":"and more"}]}"#))
        #expect(subscriptionFailure == [.subscriptionFailed(7, WireFailure(code: "graphql_error", message: "bad room; and more", payload: [["message": "bad room"], ["message": "and more"]]))])
    }

    @Test("ping is answered pong; a probe resolves on the pong, oldest first")
    func pingPong() {
        var machine = ready()
        #expect(machine.receive(.text(#"{"type":"ping"}"#)).compactMap(text) == [#"{"type":"pong"}"#])
        #expect(machine.perform(.ping(10)).compactMap(text) == [#"{"type":"ping"}"#])
        expectKinds(machine.perform(.ping(11)), [.send])
        #expect(machine.receive(.text(#"{"type":"pong"}"#)) == [.replied(10, .success(.acknowledged(position: nil, payload: nil)))])
        #expect(machine.receive(.text(#"{"type":"pong"}"#)) == [.replied(11, .success(.acknowledged(position: nil, payload: nil)))])
        #expect(machine.receive(.text(#"{"type":"pong"}"#)) == [], "an unsolicited pong is fine")
    }

    @Test("a frame that is not the protocol ends the connection with 4400, retried", arguments: [
        TransportFrame.text("not json"), .text(#"{"type":"nope"}"#), .binary([1, 2]), .text(#"{"id":"x"}"#),
    ])
    func malformed(frame: TransportFrame) {
        var machine = ready()
        let actions = machine.receive(frame)
        guard case .end(let ending)? = actions.first else {
            Issue.record("not ended: \(actions)")
            return
        }
        #expect(ending.disposition == .retry)
        #expect(ending.closeCode == CloseCode(4400))
        #expect(machine.receive(.text(#"{"type":"ping"}"#)) == [], "nothing after the end")
    }

    @Test("goodbye completes every active subscription")
    func goodbye() {
        var machine = ready()
        expectKinds(machine.perform(.subscribe(7, Topic("a", options: "subscription { a }"), resume: nil)), [.send, .subscribed])
        expectKinds(machine.perform(.subscribe(8, Topic("b", options: "subscription { b }"), resume: nil)), [.send, .subscribed])
        #expect(machine.perform(.goodbye).compactMap(text) == [#"{"id":"s1","type":"complete"}"#, #"{"id":"s2","type":"complete"}"#])
    }

    @Test(
        "close codes: what each means (Strawberry's 4403 is rejected credentials; 4429 is fatal here)",
        arguments: [
            (UInt16(4403), RetryDisposition.doNotRetry), (4401, .doNotRetry), (4400, .doNotRetry), (4409, .doNotRetry),
            (4429, .doNotRetry), (4500, .doNotRetry), (1002, .doNotRetry), (4408, .retry), (4504, .retry),
            (1000, .retry), (1001, .retry), (1006, .retry), (1012, .retry), (4000, .retry),
        ]
    )
    func closeCodes(code: UInt16, disposition: RetryDisposition) {
        let ending = GraphQLTransportWS.ending(code: CloseCode(code), reason: "x")
        #expect(ending.disposition == disposition)
        if code == 4403 { #expect(ending.reason.code == .credentialsRejected) }
    }

    @Test("a socket that ends without a close frame is a network loss, retried")
    func noCloseFrame() {
        let ending = GraphQLTransportWS.ending(code: nil, reason: "connection reset")
        #expect(ending.reason.code == .networkLost)
        #expect(ending.disposition == .retry)
    }
}

package import ConnectionPolicy

// What goes into a protocol machine and what comes out: the core's commands, the machine's
// actions, and the values they carry (positions, outcomes, failures, timers, endings).

/// What a (re)subscription covered. Positions are the stream's latest when the server said
/// (Tether's `ok` `seq`), so the core knows where a catch-up ends and where to resume next.
package enum SubscribeOutcome: Hashable, Sendable {
    /// Subscribed; nothing was asked to be caught up (or the stream starts now).
    case live(at: StreamPosition?)
    /// Every message after the resume position follows (or followed), up to `to`.
    case caughtUp(to: StreamPosition?)
    /// The server no longer had every message after the resume position.
    case gap(at: StreamPosition?)
    /// The protocol cannot resume: what was published meanwhile is unknown — refetch.
    case resumeUnsupported

    /// The stream's position the outcome names.
    package var position: StreamPosition? {
        switch self {
        case .live(let position), .caughtUp(let position), .gap(let position): position
        case .resumeUnsupported: nil
        }
    }
}

/// A request's or a subscription's failure, as the protocol reported it.
package struct WireFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// A machine-readable code when the protocol has one.
    package var code: String
    package var message: String
    /// The server's payload, when it sent one (GraphQL errors, a Socket.IO ack).
    package var payload: JSONValue?

    package init(code: String, message: String, payload: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.payload = payload
    }

    package var description: String { "\(code): \(message)" }
}

/// How a request ended on the wire.
package enum WireReply: Hashable, Sendable {
    /// The server acknowledged it; `position` is the message's, where the protocol gives one,
    /// and `payload` the server's answer (a mutation's result, an ack's arguments).
    case acknowledged(position: StreamPosition?, payload: JSONValue?)
    /// Sent; the protocol has no acknowledgement for it (never a pretended ack).
    case sentUnconfirmed
}

/// A timer an adapter asks the core to arm (a server-heartbeat watchdog, …).
package struct WireTimer: Hashable, Sendable, CustomStringConvertible {
    package var name: String

    package init(_ name: String) { self.name = name }

    package var description: String { name }
}

/// What the end of a connection means: why, and whether to retry.
package struct WireEnding: Hashable, Sendable {
    package var reason: DisconnectReason
    package var disposition: RetryDisposition
    /// The close code the client sends, when it is the client that ends the connection.
    package var closeCode: CloseCode

    package init(_ reason: DisconnectReason, _ disposition: RetryDisposition, closeCode: CloseCode = .normal) {
        self.reason = reason
        self.disposition = disposition
        self.closeCode = closeCode
    }
}

/// A subscription the core will resubscribe on the next socket, and where it resumes.
package struct WireResume: Hashable, Sendable {
    package var topic: Topic
    package var position: StreamPosition?

    package init(topic: Topic, position: StreamPosition?) {
        self.topic = topic
        self.position = position
    }
}

/// What the core asks of a connection.
package enum WireCommand: Hashable, Sendable {
    case subscribe(SubscriptionID, Topic, resume: StreamPosition?)
    case unsubscribe(SubscriptionID)
    /// `key`: the publish's idempotency key, kept by the core across sockets (protocols that
    /// have no such thing ignore it).
    case publish(RequestID, Topic, JSONValue, key: String?)
    /// Elicit an answer now (only when the protocol can: see ``WireCapabilities/canProbe``).
    case ping(RequestID)
    /// An orderly goodbye in the protocol's terms, before the core closes the socket.
    case goodbye
    /// The token provider's answer for the open connection (after ``Session/credentialsChanged()``,
    /// or after the machine's ``WireAction/credentialsNeeded``): a protocol that takes
    /// credentials in band (Supabase's `access_token`) sends it; the others use it on their next
    /// connection. `nil`: the provider gave none.
    case credentials(Secret?)
    /// Announce this client on a subscribed topic with `state` (`nil`: stop announcing it), where
    /// the protocol has presence (``WireCapabilities/tracksPresence``). The machine announces it
    /// again after every rejoin of its own; the core sends it after every resubscribe. `request`:
    /// the app's call awaiting the server's answer (`nil` for a re-announcement).
    case presence(RequestID?, Topic, state: JSONValue?)
    /// The app has finished the subscription's messages up to and including `through`: a
    /// protocol that acknowledges a message only once the app is done with it
    /// (``WireCapabilities/acknowledgesWhenFinished``) acknowledges them now. The others ignore it.
    case finished(SubscriptionID, through: StreamPosition)
}

/// What a connection asks the core to do, in order.
package enum WireAction: Hashable, Sendable {
    case send(TransportFrame)
    /// The handshake is done: the core may subscribe and publish.
    case ready
    /// The server takes requests now, ahead of the handshake's answer (it handles a
    /// connection's frames in order and applies none behind credentials it rejects): the core
    /// may send its replay and outbox in the same flight. The status waits for ``ready``.
    case pipelining
    case subscribed(SubscriptionID, SubscribeOutcome)
    case subscriptionFailed(SubscriptionID, WireFailure)
    /// The server ended a subscription (a GraphQL `complete`).
    case subscriptionEnded(SubscriptionID, reason: String)
    case delivery(SubscriptionID, JSONValue, position: StreamPosition?)
    /// A run of one subscription's messages from one read, in order, as the codec built them
    /// (the subscription's channel, positions, nothing flagged), and their frames' bytes (what
    /// the subscribers' byte bound counts): the core hands them on as they are, looking the
    /// channel up once for the run (Tether's machine, from a read).
    case deliveries(SubscriptionID, [ChannelMessage], bytes: Int)
    /// A message the server says it sent before (MQTT's DUP flag): delivered, flagged
    /// ``ChannelMessage/isRedelivery``.
    case redelivery(SubscriptionID, JSONValue, position: StreamPosition?)
    case replied(RequestID, Result<WireReply, WireFailure>)
    case arm(WireTimer, after: Duration)
    case cancel(WireTimer)
    /// The connection must end now, for this reason and with this disposition.
    case end(WireEnding)
    /// The credentials in use expire (or expired) while the connection stays open: ask the token
    /// provider, and answer with ``WireCommand/credentials(_:)``.
    case credentialsNeeded
}

/// What a protocol can do, so the core adapts instead of pretending.
package struct WireCapabilities: Hashable, Sendable {
    package enum PublishAcknowledgement: Hashable, Sendable { case always, optional, none }
    package enum Liveness: Hashable, Sendable { case clientPing, serverPing, both }

    package var publishAcknowledgement: PublishAcknowledgement
    /// Indicates that a resubscribe can ask for what was missed.
    package var resumesSubscriptions: Bool
    package var liveness: Liveness
    /// Indicates that the client can elicit an answer now (the foreground probe, `ping()`).
    package var canProbe: Bool
    /// Indicates that a publish whose acknowledgement was lost with the connection is sent again
    /// (with its idempotency key): the server applies the key at most once (Tether), or
    /// re-sending is the protocol's own rule (MQTT QoS 1: at least once, the re-send marked DUP
    /// with its packet id).
    package var deduplicatesPublishes: Bool
    /// Indicates that the client can announce itself on a topic (``WireCommand/presence(_:_:state:)``).
    package var tracksPresence: Bool
    /// Indicates that the server redelivers what the client has not acknowledged (MQTT QoS 1 on
    /// a persistent session): the machine acknowledges a message once the core says the app
    /// finished it (``WireCommand/finished(_:through:)``), so a kill before then brings it again.
    package var acknowledgesWhenFinished = false
    /// Indicates that the protocol's session state changes with what is delivered (Supabase: the
    /// ids delivered, by position): with a store it is written with the positions, before the
    /// app is handed the messages, not only when the socket ends.
    package var sessionStateTracksDeliveries = false
    /// Indicates that a channel subscribed again from a position gets every message after it
    /// that the server still holds, and says when it holds too few (a gap): a subscriber held
    /// back at its bound can be caught up (Tether's protocol).
    package var catchesUpSubscribers = false

    package init(
        publishAcknowledgement: PublishAcknowledgement, resumesSubscriptions: Bool, liveness: Liveness, canProbe: Bool, deduplicatesPublishes: Bool = false,
        tracksPresence: Bool = false
    ) {
        self.publishAcknowledgement = publishAcknowledgement
        self.resumesSubscriptions = resumesSubscriptions
        self.liveness = liveness
        self.canProbe = canProbe
        self.deduplicatesPublishes = deduplicatesPublishes
        self.tracksPresence = tracksPresence
    }
}

extension WireAction {
    /// The answer of a protocol without presence to ``WireCommand/presence(_:_:state:)`` (the
    /// core checks ``WireCapabilities/tracksPresence`` first: this is the machine's own guard).
    package static func presenceUnsupported(_ request: RequestID?) -> [WireAction] {
        guard let request else { return [] }
        return [.replied(request, .failure(WireFailure(code: "unsupported", message: "this protocol has no presence to track")))]
    }
}

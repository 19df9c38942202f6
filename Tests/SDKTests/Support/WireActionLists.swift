import SDK
import Testing

/// The frames among `actions`, in order — and an issue recorded unless every other action is
/// exactly `others`, in order. A test that reads only the frames still sees an extra, missing or
/// early action (a `.subscribed` with the join frame instead of with its ack, a timer not armed).
func frames(
    of actions: [WireAction], besides others: [WireAction], sourceLocation: SourceLocation
) -> [TransportFrame] {
    var frames: [TransportFrame] = []
    var rest: [WireAction] = []
    for action in actions {
        if case .send(let frame) = action { frames.append(frame) } else { rest.append(action) }
    }
    #expect(rest == others, "the actions besides the frames", sourceLocation: sourceLocation)
    return frames
}

/// What an action is, without its payload: for setup steps whose action list is pinned by its
/// shape (an extra, missing or early action fails) while the payloads are pinned elsewhere.
enum ActionKind: Hashable, CustomStringConvertible {
    case send, ready, pipelining, subscribed, subscriptionFailed, subscriptionEnded, delivery, replied, arm, cancel, end
    case credentialsNeeded

    init(_ action: WireAction) {
        self = switch action {
        case .send: .send
        case .ready: .ready
        case .pipelining: .pipelining
        case .subscribed: .subscribed
        case .subscriptionFailed: .subscriptionFailed
        case .subscriptionEnded: .subscriptionEnded
        case .delivery, .redelivery, .deliveries: .delivery
        case .replied: .replied
        case .arm: .arm
        case .cancel: .cancel
        case .end: .end
        case .credentialsNeeded: .credentialsNeeded
        }
    }

    var description: String {
        switch self {
        case .send: "send"
        case .ready: "ready"
        case .pipelining: "pipelining"
        case .subscribed: "subscribed"
        case .subscriptionFailed: "subscriptionFailed"
        case .subscriptionEnded: "subscriptionEnded"
        case .delivery: "delivery"
        case .replied: "replied"
        case .arm: "arm"
        case .cancel: "cancel"
        case .end: "end"
        case .credentialsNeeded: "credentialsNeeded"
        }
    }
}

/// Records an issue unless `actions` are, in order, of `kinds` (a setup step's whole action
/// list, by shape); returns them.
@discardableResult
func expectKinds(
    _ actions: [WireAction], _ kinds: [ActionKind], sourceLocation: SourceLocation = #_sourceLocation
) -> [WireAction] {
    #expect(actions.map(ActionKind.init) == kinds, "the whole action list: \(actions)", sourceLocation: sourceLocation)
    return actions
}

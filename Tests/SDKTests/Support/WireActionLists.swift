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

/// What the side that ended a connection says about trying again.
///
/// These three answers are all there will be: a `switch` needs no `default`.
@frozen
public enum RetryDisposition: Hashable, Sendable, CustomStringConvertible {
    /// A passing failure: retry with backoff.
    case retry
    /// The server says when: retry no sooner than after this long.
    case retryAfter(Duration)
    /// A fatal failure (for example, rejected credentials): do not retry until the app asks.
    case doNotRetry

    public var description: String {
        switch self {
        case .retry: "retry"
        case .retryAfter(let delay): "retry after \(delay)"
        case .doNotRetry: "do not retry"
        }
    }
}

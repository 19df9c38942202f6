/// What one recovery did: from the trigger (the app coming back, a reconnect, `connect()`, a
/// background refresh) to fully recovered — every step replayed, every missed message caught
/// up, the outbox flushed.
public struct RecoveryReport: Hashable, Sendable, CustomStringConvertible {
    /// What started the recovery.
    ///
    /// A struct, not an enum, so that a later release can name a new trigger without breaking
    /// an app's `switch`: match the triggers you care about (`case .foreground:`) and give the
    /// rest a `default`.
    public struct Trigger: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The trigger's name, as in ``description`` (`"foreground"`, `"networkRestored"`).
        public let rawValue: String

        /// A trigger with this name. Tether reports only the triggers below; this initializer
        /// exists for tests and logs that read a name back.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The session's first connection after it started.
        public static let launch = Trigger(rawValue: "launch")
        /// The app came back to the foreground (Auto mode reconnects).
        public static let foreground = Trigger(rawValue: "foreground")
        /// The connection was lost and the session reconnected by itself.
        public static let reconnect = Trigger(rawValue: "reconnect")
        /// The app called `connect()` (Manual mode).
        public static let appConnect = Trigger(rawValue: "appConnect")
        /// The network came back after being unreachable.
        public static let networkRestored = Trigger(rawValue: "networkRestored")
        /// The app replaced the connection policy (`replacePolicy(_:)`).
        public static let policyReplaced = Trigger(rawValue: "policyReplaced")
        /// A background refresh (`refresh(within:discretionary:)`) opened the connection.
        public static let backgroundRefresh = Trigger(rawValue: "backgroundRefresh")

        public var description: String { rawValue }
    }

    /// How one step ended.
    ///
    /// These two cases are all there will be.
    @frozen
    public enum Outcome: Hashable, Sendable {
        /// The step succeeded.
        case succeeded
        /// The step failed, and why.
        case failed(String)
    }

    /// One step of the recovery.
    public struct Step: Hashable, Sendable, CustomStringConvertible {
        /// Which step.
        public var id: RecoveryStepID
        /// How it ended.
        public var outcome: Outcome
        /// Attempts made (0 for a step that failed because a prerequisite did).
        public var attempts: Int
        /// Indicates a step replayed from the journal rather than performed for the first time.
        public var isReplay: Bool

        public var description: String {
            let result = switch outcome {
            case .succeeded: "ok"
            case .failed(let reason): "failed (\(reason))"
            }
            return "\(id) \(result) after \(attempts) attempt(s)\(isReplay ? ", replayed" : "")"
        }
    }

    /// What started the recovery.
    public var trigger: Trigger
    /// From the trigger to fully recovered, on the session's clock.
    public var duration: Duration
    /// Every step, in journal order, starting with `connected` and `authenticated`.
    public var steps: [Step]
    /// Messages caught up per channel (published while away, delivered by the replay).
    public var caughtUp: [String: Int]
    /// Channels where the server no longer had every missed message: refetch them.
    public var gaps: Set<String>
    /// Publishes sent from the outbox.
    public var outboxFlushed: Int
    /// Channels resubscribed on a protocol that cannot resume a subscription
    /// (graphql-transport-ws, Socket.IO): what was published while away is unknown — refetch
    /// them (never reported as caught up).
    public var refetch: Set<String> = []
    /// For each channel resumed from a position an earlier launch of the app kept (with a
    /// store): how long before this recovery that position was stored — how far back the
    /// catch-up reached.
    public var reachedBack: [String: Duration] = [:]

    /// Every channel whose missed messages the app must fetch itself: ``gaps`` and ``refetch``.
    public var channelsToRefetch: Set<String> { gaps.union(refetch) }

    /// Indicates that every step succeeded and nothing was missed for good (nor is unknown).
    public var isComplete: Bool {
        gaps.isEmpty && refetch.isEmpty && steps.allSatisfy { $0.outcome == .succeeded }
    }

    public var description: String {
        "recovery after \(trigger) in \(duration): \(steps.count) steps, caught up \(caughtUp.values.reduce(0, +)), "
            + "gaps \(gaps.sorted()), " + (refetch.isEmpty ? "" : "refetch \(refetch.sorted()), ") + "outbox \(outboxFlushed)"
    }
}

/// What an app-defined recovery step is told when it runs.
public struct RecoveryStepContext: Sendable {
    /// The session the step belongs to (not stored: no retain cycle).
    public let session: Session
    /// Indicates a replay after a reconnect rather than the first performance: a step must not
    /// record anything new (subscribe again, add steps) when replaying.
    public let isReplay: Bool
    /// The attempt (1 is the first).
    public let attempt: Int
}

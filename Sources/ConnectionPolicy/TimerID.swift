/// Names a timer a policy arms. A policy the app writes may add its own names.
public struct TimerID: Hashable, Sendable, CustomStringConvertible {
    public let name: String

    public init(_ name: String) { self.name = name }

    /// Manual mode's background watchdog.
    public static let watchdog = TimerID("watchdog")
    /// Auto mode's background grace period.
    public static let backgroundGrace = TimerID("background-grace")
    /// The delay before the next reconnect attempt.
    public static let reconnect = TimerID("reconnect")

    public var description: String { name }
}

/// One arming of a timer: its name and a generation. Re-arming a timer gives it a new
/// generation, so a fire from an earlier arming is recognised as stale and ignored.
public struct PolicyTimer: Hashable, Sendable, CustomStringConvertible {
    public let id: TimerID
    public let generation: UInt64

    public init(id: TimerID, generation: UInt64) {
        self.id = id
        self.generation = generation
    }

    public var description: String { "\(id)#\(generation)" }
}

/// Hands out timer generations, so that no two armings of a policy share one.
public struct TimerGenerations: Hashable, Sendable {
    private var next: UInt64 = 1

    public init() {}

    /// A fresh arming of the timer `id`.
    public mutating func make(_ id: TimerID) -> PolicyTimer {
        defer { next &+= 1 }
        return PolicyTimer(id: id, generation: next)
    }
}

/// Names a timer a policy arms. A policy the app writes may add its own names.
public struct TimerID: Hashable, Sendable, CustomStringConvertible {
    /// The timer's name, as logs and `SessionTimer` show it.
    public let name: String

    /// A timer named `name` (a custom policy's own).
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
    /// Which timer.
    public let id: TimerID
    /// Which arming of it: a fire whose generation is not the latest is stale.
    public let generation: UInt64

    /// The `generation`th arming of timer `id`.
    public init(id: TimerID, generation: UInt64) {
        self.id = id
        self.generation = generation
    }

    public var description: String { "\(id)#\(generation)" }
}

/// Hands out timer generations, so that no two armings of a policy share one.
public struct TimerGenerations: Hashable, Sendable {
    private var next: UInt64 = 1

    /// Generations from 1, one sequence for all of a policy's timers.
    public init() {}

    /// A fresh arming of the timer `id`.
    public mutating func make(_ id: TimerID) -> PolicyTimer {
        defer { next &+= 1 }
        return PolicyTimer(id: id, generation: next)
    }
}

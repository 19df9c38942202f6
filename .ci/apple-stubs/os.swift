// https://developer.apple.com/documentation/os/logger
// `struct Logger` (Sendable)
public struct Logger: Sendable {
    // https://developer.apple.com/documentation/os/logger/init(subsystem:category:)
    // `init(subsystem: String, category: String)`
    public init(subsystem: String, category: String) {}

    // https://developer.apple.com/documentation/os/logger/debug(_:)
    // `func debug(_ message: OSLogMessage)`
    public func debug(_ message: OSLogMessage) {}
    // https://developer.apple.com/documentation/os/logger/info(_:)
    // `func info(_ message: OSLogMessage)`
    public func info(_ message: OSLogMessage) {}
    // https://developer.apple.com/documentation/os/logger/notice(_:)
    // `func notice(_ message: OSLogMessage)`
    public func notice(_ message: OSLogMessage) {}
    // https://developer.apple.com/documentation/os/logger/warning(_:)
    // `func warning(_ message: OSLogMessage)`
    public func warning(_ message: OSLogMessage) {}
    // https://developer.apple.com/documentation/os/logger/error(_:)
    // `func error(_ message: OSLogMessage)`
    public func error(_ message: OSLogMessage) {}
}

// https://developer.apple.com/documentation/os/oslogmessage
// `struct OSLogMessage` (ExpressibleByStringInterpolation, with OSLogInterpolation)
public struct OSLogMessage: ExpressibleByStringInterpolation {
    public init(stringLiteral value: String) {}
    public init(stringInterpolation: OSLogInterpolation) {}
}

// https://developer.apple.com/documentation/os/osloginterpolation
// `struct OSLogInterpolation : StringInterpolationProtocol`
public struct OSLogInterpolation: StringInterpolationProtocol {
    public init(literalCapacity: Int, interpolationCount: Int) {}
    public mutating func appendLiteral(_ literal: String) {}
    // https://developer.apple.com/documentation/os/osloginterpolation/appendinterpolation(_:align:privacy:)-1dvvh
    // `mutating func appendInterpolation(_ argumentString: @autoclosure @escaping () -> String, align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto)`
    public mutating func appendInterpolation(
        _ argumentString: @autoclosure @escaping () -> String, align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto
    ) {}
}

// https://developer.apple.com/documentation/os/oslogstringalignment
// `struct OSLogStringAlignment` — `static var none: OSLogStringAlignment`
public struct OSLogStringAlignment: Sendable {
    public static var none: OSLogStringAlignment { OSLogStringAlignment() }
}

// https://developer.apple.com/documentation/os/oslogprivacy
// `struct OSLogPrivacy` — `static var auto`, `static var public`, `static var private`
public struct OSLogPrivacy: Sendable {
    public static var auto: OSLogPrivacy { OSLogPrivacy() }
    public static var `public`: OSLogPrivacy { OSLogPrivacy() }
    public static var `private`: OSLogPrivacy { OSLogPrivacy() }
}

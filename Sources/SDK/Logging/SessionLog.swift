/// How much a log record matters.
///
/// These five levels are all there will be.
@frozen
public enum LogLevel: Int, Comparable, Sendable, CaseIterable, CustomStringConvertible {
    /// Detail for following one session step by step.
    case debug
    /// What the session did: connected, subscribed, recovered.
    case info
    /// Something an app should know about, that the session handles (a reconnect, a gap).
    case notice
    /// Something that went wrong and was handled (a refused publish, a malformed frame).
    case warning
    /// Something the session could not handle (rejected credentials, a store it cannot write).
    case error

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        }
    }
}

/// One thing the session did, and why. Never holds a credential.
public struct LogRecord: Sendable, CustomStringConvertible {
    /// How important the line is.
    public let level: LogLevel
    /// The line itself: credentials are already redacted.
    public let message: String

    public var description: String { "[\(level)] \(message)" }
}

/// Where the session's log goes: records at or above `minimumLevel` are handed to `sink`.
/// The default is `os.Logger` (subsystem "Tether") on Apple platforms and silence elsewhere.
public struct SessionLogger: Sendable {
    /// The least important level this logger passes to its sink.
    public let minimumLevel: LogLevel
    let sink: (@Sendable (LogRecord) -> Void)?

    /// A logger that hands every line at `minimumLevel` or above to `sink`.
    public init(minimumLevel: LogLevel = .info, sink: @escaping @Sendable (LogRecord) -> Void) {
        self.minimumLevel = minimumLevel
        self.sink = sink
    }

    private init(silent: Void) {
        minimumLevel = .error
        sink = nil
    }

    /// Logs nothing.
    public static let silent = SessionLogger(silent: ())

    /// The platform's default: `os.Logger` where there is one, else silent.
    public static var platformDefault: SessionLogger {
        #if canImport(os)
        OSLogSink.logger
        #else
        .silent
        #endif
    }

    func isEnabled(_ level: LogLevel) -> Bool { sink != nil && level >= minimumLevel }

    func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard isEnabled(level), let sink else { return }
        sink(LogRecord(level: level, message: message()))
    }
}

#if canImport(os)
import os

enum OSLogSink {
    static let logger: SessionLogger = {
        let log = Logger(subsystem: "Tether", category: "session")
        return SessionLogger(minimumLevel: .info) { record in
            switch record.level {
            case .debug: log.debug("\(record.message, privacy: .public)")
            case .info: log.info("\(record.message, privacy: .public)")
            case .notice: log.notice("\(record.message, privacy: .public)")
            case .warning: log.warning("\(record.message, privacy: .public)")
            case .error: log.error("\(record.message, privacy: .public)")
            }
        }
    }()
}
#endif

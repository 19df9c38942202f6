/// Why a ``SessionStore`` could not read or write. A store never takes what it cannot read for an
/// empty store, and never deletes or overwrites it: the session then runs in memory and says so.
public struct SessionStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure. New codes may be added; `switch` with a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Wrapped: String, Hashable, Sendable {
            case notReadableYet, newerVersion, notAStore, diskFull, notWritable, inUse
        }

        let wrapped: Wrapped

        /// The store cannot be read now — on iOS, protected data before the device's first unlock
        /// after a restart (an app launched in the background then). It may be readable later:
        /// the session runs in memory meanwhile and merges once it is.
        public static let notReadableYet = Code(wrapped: .notReadableYet)
        /// A newer release wrote the store, in a format this one does not read: it is left as it is.
        public static let newerVersion = Code(wrapped: .newerVersion)
        /// The file is not a store this release wrote (or an older format it no longer reads): it
        /// is left as it is.
        public static let notAStore = Code(wrapped: .notAStore)
        /// The device has no room left: what was not written is kept in memory, and written
        /// again with the next change.
        public static let diskFull = Code(wrapped: .diskFull)
        /// The store's directory or file cannot be created or written.
        public static let notWritable = Code(wrapped: .notWritable)
        /// Another session of this process has the store open: one store, one session.
        public static let inUse = Code(wrapped: .inUse)

        public var description: String { wrapped.rawValue }
    }

    /// What kind of failure.
    public let code: Code
    /// What happened, in words.
    public let message: String

    /// An error with its code and message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}

/// Whether what the session keeps outlives the process.
///
/// These three cases are all there will be; why a store fell back is the error it carries.
@frozen
public enum SessionStoreStatus: Sendable, Hashable, CustomStringConvertible {
    /// No store was chosen (``AppSettings/Builder/store(_:)``): everything is in memory.
    case off
    /// Every change is written to the store before what depends on it goes out.
    case durable
    /// The store could not be read or written (for instance `notReadableYet` before an iPhone's
    /// first unlock, `diskFull`, `newerVersion`): the session keeps everything in memory and
    /// goes on; a store it could not read is never written. One that was `notReadableYet` is
    /// read again each time the app comes to the foreground, merged with what this launch did,
    /// and the status turns ``durable``.
    case inMemory(SessionStoreError)

    public var description: String {
        switch self {
        case .off: "off"
        case .durable: "durable"
        case .inMemory(let error): "in memory (\(error))"
        }
    }
}

public import Foundation

extension AppSettings.Builder {
    /// Keeps what must outlive the app's process in `store`: the outbox (each publish until it
    /// ends, across launches), the position of every channel held, and what the server's
    /// protocol keeps for the session. Off by default: everything is in memory. Never stored: a
    /// token, a password, any secret. One store per session: a second session of the process on
    /// the same store runs in memory (``SessionStoreStatus``).
    public func store(_ store: any SessionStore) -> AppSettings.Builder {
        var copy = self
        copy.store = store
        return copy
    }

    /// Keeps what must outlive the process in a ``FileSessionStore`` in `directory` (made when
    /// needed): for example `applicationSupportDirectory/Tether`.
    public func storeDirectory(_ directory: URL) -> AppSettings.Builder {
        store(FileSessionStore(directory: directory))
    }
}

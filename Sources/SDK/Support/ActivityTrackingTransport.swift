import Foundation

/// A transport seen through a tracking clock (a test clock that runs until idle): it hands the
/// clock's tracker to a transport that counts the events it yields (SDKTesting's in-memory
/// one), so the session's open path knows nothing of counting. ``SessionClock/tracking(_:)``
/// puts it in front of such a transport; every other transport is used as it is.
struct ActivityTrackingTransport: Transport {
    let base: any ActivityCountingTransport
    let activity: any ActivityTracking

    func open(url: URL, headers: [String: String]) async throws -> any TransportConnection {
        try await base.open(url: url, headers: headers, subprotocols: [], activity: activity)
    }

    func open(url: URL, headers: [String: String], subprotocols: [String]) async throws -> any TransportConnection {
        try await base.open(url: url, headers: headers, subprotocols: subprotocols, activity: activity)
    }
}

/// What a connection's reader reports as it hands events on: with a tracking clock, each event
/// a counting connection yielded is a unit of work until it is in the funnel. For any other
/// connection, or clock, it reports nothing.
struct EventReadReport {
    private let counted: (any ActivityCountedConnection)?

    init(_ connection: any TransportConnection, on clock: SessionClock) {
        let counted = connection as? any ActivityCountedConnection
        self.counted = clock.activity != nil && counted?.countedActivity === clock.activity ? counted : nil
    }

    /// Indicates that the connection counts its events (its reader reads them one by one).
    var isCounting: Bool { counted != nil }

    /// An event was handed on to the funnel.
    func eventRead() { counted?.eventRead() }

    /// The reader stopped: what is left will never be read.
    func readingEnded() { counted?.readingEnded() }
}

extension SessionClock {
    /// `transport` as the session on this clock opens it: behind ``ActivityTrackingTransport``
    /// when the clock tracks activity and the transport counts its events.
    func tracking(_ transport: any Transport) -> any Transport {
        guard let activity, let counting = transport as? any ActivityCountingTransport else { return transport }
        return ActivityTrackingTransport(base: counting, activity: activity)
    }
}

import SDK

/// How a server answers a WebSocket upgrade request (``ServerCore/answerUpgrade(subprotocols:headers:)``).
package enum UpgradeAnswer: Hashable, Sendable {
    /// What a version-2 or -3 request carried (already checked).
    package struct Request: Hashable, Sendable {
        /// The subscriptions to answer, in order: those of the resume set, then those named.
        let entries: [TetherUpgrade.Entry]
        /// `tether.v2` or `tether.v3`.
        let subprotocol: String
        /// Version 3: whether the set the request named was resumed; nil on version 2.
        let resumedSet: Bool?
        /// How many of `entries`, from the first, are the resumed set's: answered in the
        /// `resume_set` frame, not by `ok`s.
        let setCount: Int
        /// Version 3: the credentials the connection opened with (a kept set is resumed only
        /// with the same).
        let credential: String?

        init(entries: [TetherUpgrade.Entry], subprotocol: String, resumedSet: Bool? = nil, setCount: Int = 0, credential: String? = nil) {
            self.entries = entries
            self.setCount = setCount
            self.subprotocol = subprotocol
            self.resumedSet = resumedSet
            self.credential = credential
        }

        /// The number of subscriptions the request carried.
        package var subscriptionCount: Int { entries.count }
    }

    /// Upgrade without a subprotocol: the client sends `auth` first.
    case version1
    /// Upgrade choosing `tether.v2` or `tether.v3`: the connection is authenticated.
    case upgraded(Request)
    /// Refuse the upgrade with this HTTP status.
    case refuse(httpStatus: Int, reason: String)

    /// The subprotocol the 101 chooses, if any.
    package var subprotocol: String? {
        if case .upgraded(let request) = self { request.subprotocol } else { nil }
    }
}

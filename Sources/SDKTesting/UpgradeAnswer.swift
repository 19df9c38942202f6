import SDK

/// How a server answers a WebSocket upgrade request (``ServerCore/answerUpgrade(subprotocols:headers:)``).
package enum UpgradeAnswer: Hashable, Sendable {
    /// What a version-2 request carried (already checked).
    package struct Request: Hashable, Sendable {
        let entries: [TetherUpgrade.Entry]
        /// The number of subscriptions the request carried.
        package var subscriptionCount: Int { entries.count }
    }

    /// Upgrade without a subprotocol: the client sends `auth` first.
    case version1
    /// Upgrade choosing `tether.v2`: the connection is authenticated.
    case version2(Request)
    /// Refuse the upgrade with this HTTP status.
    case refuse(httpStatus: Int, reason: String)

    /// The subprotocol the 101 chooses, if any.
    package var subprotocol: String? {
        if case .version2 = self { TetherUpgrade.subprotocol } else { nil }
    }
}

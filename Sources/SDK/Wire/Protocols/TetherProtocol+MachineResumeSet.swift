extension TetherProtocol.Machine {
    /// On version 3, the token and the subscriptions answered on this socket (or, before the
    /// server's first frame, the last socket's); nothing otherwise.
    package var sessionState: WireSessionState? {
        switch resumeSet {
        case .none:
            return nil
        case .awaited(_, let kept):
            return kept
        case .issued(let token):
            let members = channels.compactMap { channel, route in
                route.answered ? route.base.map { TetherResumeSet.Member(channel: channel, base: $0) } : nil
            }
            return WireSessionState(TetherSessionState(token: token, members: TetherResumeSet.canonical(members)))
        }
    }

    /// None: a server forgets a resume token within minutes, so a relaunch resumes by name.
    package var durableSessionState: WireSessionState? { nil }

    /// The server resumed the set: `answers` answers each of `entries` (the set's wanted
    /// members, in order), as its `ok` would have; nil when it does not answer them all or a
    /// member's latest is no sequence number.
    mutating func answerSet(_ entries: [TetherUpgrade.Entry], _ answers: TetherResumeSet.Answers?) -> [WireAction]? {
        guard let answers, answers.codes.count == entries.count else { return nil }
        var actions: [WireAction] = []
        actions.reserveCapacity(entries.count)
        var gaps = answers.gaps[...]
        for (index, entry) in entries.enumerated() {
            guard let latest = TetherResumeSet.Answers.latest(answers.codes[index], from: entry.since ?? 0) else { return nil }
            let gap = gaps.first == index
            if gap { gaps.removeFirst() }
            // As its `ok` would have been taken, without an array of actions per member.
            switch pending.removeValue(forKey: entry.id) {
            case .subscribe(let subscription, let resumed)?:
                actions.append(subscribeAnswered(subscription, resumed: resumed, latest: latest, gap: gap))
            case let other?:
                // Not claimed (or not a subscribe): as its `ok`.
                pending[entry.id] = other
                actions += handle(.ack(Ack(id: entry.id, sequence: latest, gap: gap)))
            case nil:
                break
            }
        }
        return actions
    }

    /// The server does not answer `entries` after all: those the core asked for go in frames.
    mutating func uncarry(_ entries: [TetherUpgrade.Entry]) -> [WireAction] {
        var actions: [WireAction] = []
        for entry in entries {
            if case .carried? = pending[entry.id] {
                dropUnclaimed(entry.channel)
                pending[entry.id] = nil
            } else if case .subscribe(let subscription, _)? = pending.removeValue(forKey: entry.id), let since = channels[entry.channel].map({ $0.lastDelivered }) {
                let id = makeWireID()
                pending[id] = .subscribe(subscription, resumed: since != nil)
                actions += send(.subscribe(id: id, channel: entry.channel, since: since)) ?? [.subscriptionFailed(subscription, Self.encodingFailure)]
            }
        }
        return actions
    }
}

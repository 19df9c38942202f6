import SDK

extension ServerCore {
    /// Closed connections' subscriptions kept for version 3's resume set, by token: bounded in
    /// number (the oldest go first) and in time.
    struct KeptSets {
        struct Kept {
            let members: [TetherResumeSet.Member]
            let credential: String?
            let expires: Duration
        }

        private(set) var sets: [String: Kept] = [:]
        /// Tokens in the order they were kept; `order[head...]` may name sets already gone.
        private var order: [String] = []
        private var head = 0

        var count: Int { sets.count }

        subscript(token: String) -> Kept? { sets[token] }

        mutating func keep(_ kept: Kept, as token: String, limit: Int, now: Duration) {
            sets[token] = kept
            order.append(token)
            // The oldest go first: over the limit, or expired (they expire in the order kept).
            while head < order.count {
                if let oldest = sets[order[head]], sets.count <= limit, oldest.expires > now { break }
                sets[order[head]] = nil
                head += 1
            }
            if head > 64, head * 2 >= order.count {
                order.removeFirst(head)
                head = 0
            }
        }
    }

    /// The subscriptions a `Tether-Resume-Set` value (`header`) asks for, in the set's order with
    /// wire ids 1 …, and whether the server holds that set (same token and credentials, not
    /// expired, the same members as the client counted them); the `named` entries must take ids
    /// above them and other channels.
    func resumeSet(
        _ header: String?, named: [TetherUpgrade.Entry], credential: String?
    ) throws(TetherUpgrade.MalformedHeader) -> ([TetherUpgrade.Entry], resumed: Bool) {
        guard let header else { return ([], false) }
        let request = try TetherResumeSet.Request(headerValue: header)
        guard named.allSatisfy({ $0.id > RequestID(request.wantedCount) }) else {
            throw TetherUpgrade.MalformedHeader(description: "a named entry takes an id the set's entries take (1 to \(request.wantedCount))")
        }
        guard let members = members(kept: request.token, credential: credential), let positions = request.positions(for: members) else {
            return ([], false)
        }
        var entries: [TetherUpgrade.Entry] = []
        for (member, position) in zip(members, positions) {
            let since: UInt64?
            switch position {
            case .left: continue
            case .live: since = nil
            case .since(let sequence): since = sequence
            }
            entries.append(TetherUpgrade.Entry(id: RequestID(entries.count + 1), channel: member.channel, since: since))
        }
        if !named.isEmpty {
            let setChannels = Set(entries.map(\.channel))
            guard !named.contains(where: { setChannels.contains($0.channel) }) else {
                throw TetherUpgrade.MalformedHeader(description: "a named entry repeats a channel of the set")
            }
        }
        // A member refused now is not resumed: the client subscribes in frames, and is told.
        guard rejectedChannels.isEmpty || !entries.contains(where: { rejectedChannels.contains($0.channel) }) else { return ([], false) }
        return (entries, true)
    }

    /// Joins connection `id` to the resumed set's `entries`: the `resume_set` frame that answers
    /// each of them, then the messages they missed, in the set's order (no `ok` per member).
    mutating func joinSet(_ id: ConnectionID, token: String, _ entries: ArraySlice<TetherUpgrade.Entry>) -> [Output] {
        var answers = TetherResumeSet.Answers()
        answers.reserveCapacity(entries.count)
        var missed: [Output] = []
        for entry in entries {
            // In place, in one lookup: a copy would make the change copy its buffers.
            let (latest, messages, gap) = channels[entry.channel, default: Channel()].join(id, since: entry.since)
            clients[id]?.channels[entry.channel] = latest
            answers.append(latest: latest, from: entry.since ?? 0, gap: gap)
            for message in messages { missed.append(.send(id, message.frame)) }
        }
        return reply(id, .resumeSet(token: token, resumed: true, answers: answers)) + missed
    }

    /// The subscriptions kept under `token` for `credential`: an open connection's as they are
    /// now (the client found it dead before the server did), a closed one's as it left them.
    private func members(kept token: String, credential: String?) -> [TetherResumeSet.Member]? {
        if let id = openResumeTokens[token], let open = clients[id] {
            guard open.credential == credential else { return nil }
            return TetherResumeSet.canonical(open.channels.map { TetherResumeSet.Member(channel: $0.key, base: $0.value) })
        }
        guard let kept = keptSets[token], kept.credential == credential, kept.expires > now() else { return nil }
        return kept.members
    }

    /// Keeps a closing version-3 connection's subscriptions under its token.
    mutating func keep(_ client: Client) {
        guard let token = client.resumeToken else { return }
        let members = TetherResumeSet.canonical(client.channels.map { TetherResumeSet.Member(channel: $0.key, base: $0.value) })
        let kept = KeptSets.Kept(members: members, credential: client.credential, expires: now() + configuration.resumeSetLifetime)
        keptSets.keep(kept, as: token, limit: configuration.maxResumeSets, now: now())
    }

    /// 128 random bits as 22 characters of base-64url.
    static func makeResumeToken() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var generator = SystemRandomNumberGenerator()
        var bits = (generator.next() as UInt64, generator.next() as UInt64)
        var bytes: [UInt8] = []
        for _ in 0..<22 {
            bytes.append(alphabet[Int(bits.0 & 63)])
            bits.0 = bits.0 >> 6 | bits.1 << 58
            bits.1 >>= 6
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

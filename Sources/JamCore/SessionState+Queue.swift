import JamProtocol

extension SessionState {
    static func nonceKey(_ user: UserID, _ nonce: String) -> String { "\(user.rawValue)\u{1F}\(nonce)" }

    mutating func add(_ track: Track, nonce: String, itemId: ItemID, by user: UserID, role: Role, at now: Millis, into outcome: inout Outcome) throws(JamError) {
        try track.validate(requireIdAndName: rules.tracksNeedIdAndName, capBytes: rules.capsTextBytes)
        try Validate.nonce(nonce)
        let nonceKey = Self.nonceKey(user, nonce)
        if let existing = repeatedAdd(nonceKey: nonceKey) {
            // A retried add: same answer, nothing new happens.
            outcome.itemId = existing
            return
        }
        if settings.locked && !role.hasHostControls {
            throw JamError(.locked, "the session is locked: only hosts may add")
        }
        if !settings.allowDuplicates && isQueuedOrPlaying(track) {
            throw JamError(.duplicate, "\"\(track.name)\" is already queued or playing")
        }
        if let limit = rules.maxQueueLength, queue.count >= limit {
            throw JamError(.queueLimit, "the queue is full (\(limit) tracks)")
        }
        let mine = queue.reduce(0) { $0 + ($1.addedBy == user ? 1 : 0) }
        if !settings.mayQueueAnother(waiting: mine, role: role) {
            throw JamError(.queueLimit, "you already have \(mine) items queued (limit \(settings.maxQueuedPerMember))")
        }
        let adder = members.firstIndex { $0.userId == user }
        if let adder, let next = settings.nextAddAt(for: members[adder].view), now < next {
            throw JamError(
                .rateLimited,
                "you can add again in \(Self.minutesAndSeconds(next - now)) (one add every \(Self.minutesAndSeconds(Int64(settings.addCooldownSeconds) * 1000)))",
                retryAfterMs: next - now)
        }
        if queue.contains(where: { $0.id == itemId }) || current?.item.id == itemId || upNext?.item.id == itemId {
            throw JamError(.conflict, "item \(itemId) already exists")
        }
        let adderName = member(user)?.displayName ?? ""
        let item = ItemRecord(
            id: itemId, track: track, addedBy: user, addedByName: adderName, addedAt: now, addOrder: addCounter,
            votes: [:], scoreSince: now)
        addCounter += 1
        rememberNonce(nonceKey, itemId)
        outcome.itemId = itemId
        if let adder, settings.addCooldownSeconds > 0 {
            // Kept only while a cooldown is set, so turning one on starts everybody afresh.
            members[adder].lastAddedAt = now
            emit(.memberUpdated(members[adder].view), at: now, into: &outcome)
        }
        if current == nil && rules.startMode == .scheduled {
            // Nothing plays: the first track added starts at once.
            start(item, startAt: now + leadMs(), previous: nil, at: now, into: &outcome)
            emitQueue(at: now, into: &outcome)
        } else if current == nil && rules.startMode == .hostDevice {
            // The host's device plays it as soon as it hears of it.
            playAtOnce(item, at: now, previous: nil, into: &outcome)
            emitQueue(at: now, into: &outcome)
        } else {
            queue.append(item)
            emitQueued(queue.count - 1, at: now, into: &outcome)
            yieldFallbackUpNext(at: now, into: &outcome)
            // A playing item may now have a successor to prepare.
            advanceTimeline(to: now, into: &outcome)
        }
    }

    /// The item an earlier add by `user` with the same `nonce` made, while a repeat of that
    /// add is still a retry (answered with this item, adding nothing); nil when an add with
    /// this nonce would add.
    public func repeatedAdd(nonce: String, by user: UserID) -> ItemID? {
        repeatedAdd(nonceKey: Self.nonceKey(user, nonce))
    }

    private func repeatedAdd(nonceKey: String) -> ItemID? {
        guard let existing = nonces[nonceKey] else { return nil }
        return !rules.noncesRepeatOnlyWhileQueued || queue.contains(where: { $0.id == existing }) ? existing : nil
    }

    /// "2:05": a wait as people read it, rounded up to the second.
    static func minutesAndSeconds(_ ms: Int64) -> String {
        let seconds = (max(0, ms) + 999) / 1000
        return "\(seconds / 60):" + String(repeating: "0", count: seconds % 60 < 10 ? 1 : 0) + "\(seconds % 60)"
    }

    func isQueuedOrPlaying(_ track: Track) -> Bool {
        func same(_ other: Track) -> Bool { other.id == track.id && other.source == track.source }
        return queue.contains { same($0.track) } || current.map { same($0.item.track) } == true
            || upNext.map { same($0.item.track) } == true
    }

    mutating func rememberNonce(_ key: String, _ itemId: ItemID) {
        // A nonce that adds again (its item left the queue) keeps its one place in the order.
        if nonces.updateValue(itemId, forKey: key) == nil { nonceOrder.append(key) }
        if nonceOrder.count > Self.nonceLimit {
            let excess = nonceOrder.count - Self.nonceLimit
            for old in nonceOrder.prefix(excess) { nonces[old] = nil }
            nonceOrder.removeFirst(excess)
        }
    }

    mutating func remove(_ itemId: ItemID, by user: UserID, role: Role, at now: Millis, into outcome: inout Outcome) throws(JamError) {
        // Only hosts and co-hosts may skip: others are not pointed at a control they lack.
        if current?.item.id == itemId {
            throw JamError(.conflict, role.hasHostControls ? "the item is playing now; skip it instead" : "the item is playing now and can no longer be removed")
        }
        if upNext?.item.id == itemId {
            throw JamError(
                .conflict, role.hasHostControls ? "the item is about to play; skip it when it starts" : "the item is about to play and can no longer be removed")
        }
        guard let index = queue.firstIndex(where: { $0.id == itemId }) else {
            throw JamError(.notFound, "no item \(itemId) in the queue")
        }
        guard queue[index].addedBy == user || role.hasHostControls else {
            throw JamError(.forbidden, "only the member who added an item or a host may remove it")
        }
        queue.remove(at: index)
        emitUnqueued(itemId, at: now, into: &outcome)
    }

    mutating func vote(_ itemId: ItemID, value: Int, by user: UserID, at now: Millis, into outcome: inout Outcome) throws(JamError) {
        try Validate.vote(value)
        guard let index = queue.firstIndex(where: { $0.id == itemId }) else {
            if rules.startMode == .hostDevice, current?.item.id == itemId {
                // Its app shows votes on what plays too; they rank nothing, so no reason changes.
                voteOnCurrent(value: value, by: user, at: now, into: &outcome)
                return
            }
            if current?.item.id == itemId {
                throw JamError(.conflict, "votes only apply to queued items; this one is playing")
            }
            if upNext?.item.id == itemId {
                throw JamError(.conflict, "votes only apply to queued items; this one is about to play")
            }
            throw JamError(.notFound, "no item \(itemId) in the queue")
        }
        let previous = queue[index].votes[user] ?? 0
        let oldScore = queue[index].score
        outcome.score = oldScore
        guard previous != value else { return }
        switch settings.ordering {
        case .votes:
            // Only the voted item's sort key changes, so only it can move: the update names
            // its new index instead of sending the whole queue to every member.
            let oldRank = QueueRanking.votesRank(of: index, in: queue, equalScores: rules.equalScores)
            let newScore = changeVote(at: index, to: value, by: user, from: oldScore, at: now)
            outcome.score = newScore
            let newRank = QueueRanking.votesRank(of: index, in: queue, equalScores: rules.equalScores)
            // The reason travels with the score: a client must not show the new score beside the old reason.
            let update = VotesUpdate(itemId: itemId, score: newScore, reason: QueueItem.votesReason(score: newScore), movedTo: newRank == oldRank ? nil : newRank)
            emit(.votesUpdate(update), at: now, into: &outcome)
        case .fair:
            let before = queueOrder()
            let newScore = changeVote(at: index, to: value, by: user, from: oldScore, at: now)
            outcome.score = newScore
            // The item is queued (found above), so the ranking holds it; its round may move with its votes.
            let reason = rankedQueue().first { $0.item.id == itemId }?.reason ?? ""
            emit(.votesUpdate(VotesUpdate(itemId: itemId, score: newScore, reason: reason)), at: now, into: &outcome)
            // Turns interleave members, so a vote can move several items and their reasons: the whole queue follows.
            if queueOrder() != before { emitQueue(at: now, into: &outcome) }
        }
    }

    /// Sets `user`'s vote on the queued item at `index` and returns the item's new score; a
    /// new score restarts the time it has held its score and says whether it fell to it (the
    /// `votes` order's tie-breaks).
    private mutating func changeVote(at index: Int, to value: Int, by user: UserID, from oldScore: Int, at now: Millis) -> Int {
        queue[index].votes[user] = value == 0 ? nil : value
        let newScore = queue[index].score
        if newScore != oldScore {
            queue[index].scoreSince = now
            queue[index].scoreFell = newScore < oldScore ? true : nil
        }
        return newScore
    }

    /// Whether `user`'s vote on `itemId` is `value` already, so voting it again changes no
    /// vote (`vote` answers it with the score and nothing else).
    public func voteRepeats(on itemId: ItemID, value: Int, by user: UserID) -> Bool {
        // By index: `first(where:)` would copy the whole item to read one vote.
        if let index = queue.firstIndex(where: { $0.id == itemId }) { return (queue[index].votes[user] ?? 0) == value }
        if rules.startMode == .hostDevice, let current, current.item.id == itemId { return (current.item.votes[user] ?? 0) == value }
        return false
    }

    /// Forgets when each member last added, telling everybody: with the cooldown off nothing
    /// is kept, so turning one on again starts everybody afresh.
    mutating func forgetLastAdds(at now: Millis, into outcome: inout Outcome) {
        departedLastAdds = nil
        for index in members.indices where members[index].lastAddedAt != nil {
            members[index].lastAddedAt = nil
            emit(.memberUpdated(members[index].view), at: now, into: &outcome)
        }
    }

    /// A member leaving while their add cooldown runs: when they last added is kept until it
    /// has run out (and those that have, go).
    mutating func keepLastAdd(of member: MemberRecord, at now: Millis) {
        guard rules.cooldownOutlivesLeaving else { return }
        let cooldownMs = Int64(settings.addCooldownSeconds) * 1000
        var kept = (departedLastAdds ?? [:]).filter { now - $0.value < cooldownMs }
        if let last = member.lastAddedAt, now - last < cooldownMs { kept[member.userId] = last }
        departedLastAdds = kept.isEmpty ? nil : kept
    }

    /// When a member joining again last added, while their cooldown still runs.
    mutating func takeDepartedLastAdd(of user: UserID, at now: Millis) -> Millis? {
        guard let last = departedLastAdds?[user] else { return nil }
        departedLastAdds?[user] = nil
        if departedLastAdds?.isEmpty == true { departedLastAdds = nil }
        return now - last < Int64(settings.addCooldownSeconds) * 1000 ? last : nil
    }
}

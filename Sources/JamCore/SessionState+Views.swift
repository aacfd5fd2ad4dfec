import JamProtocol

extension SessionState {
    /// The wire view of an item: the adder as they are now (or as they were, if gone).
    public func itemView(_ item: ItemRecord, reason: String) -> QueueItem {
        // Who added it, as they are now; when they last added is the member list's business.
        var adder = member(item.addedBy)?.view
            ?? Member(userId: item.addedBy, displayName: item.addedByName, role: .member, connected: false)
        adder.lastAddedAt = nil
        return QueueItem(id: item.id, track: item.track, addedBy: adder, addedAt: item.addedAt, score: item.score, reason: reason)
    }

    /// The queue in play order, as clients see it.
    public func queueView() -> [QueueItem] {
        rankedQueue().map { itemView($0.item, reason: $0.reason) }
    }

    /// The timeline as clients see it.
    public func nowPlayingView() -> NowPlaying? {
        guard let current else { return nil }
        return NowPlaying(
            item: itemView(current.item, reason: "now playing"), epoch: current.epoch, state: current.state,
            positionMs: current.positionMs, anchorMs: current.anchorMs)
    }

    /// The session's identity as clients see it.
    public func infoView() -> SessionInfo {
        SessionInfo(
            id: id, joinCode: joinCode, name: name, hostId: hostId,
            hostDisplayName: member(hostId)?.displayName ?? "", settings: settings, createdAt: createdAt)
    }

    /// Skip requests that count: those of members who may ask (`skipVoterCount`), and those
    /// of members who left where requests outlive their leaving (`DepartedSkipRequests.keepsLeaversRequests`).
    public var skipRequestCount: Int {
        let present = members.reduce(0) { $0 + (countsForSkip($1) && skipRequests.contains($1.userId) ? 1 : 0) }
        guard rules.departedSkipRequests.keepsLeaversRequests else { return present }
        return present + skipRequests.count { member($0) == nil }
    }

    /// Members whose skip requests count: the connected ones, or every member where the
    /// host's device plays (its app's members need no socket).
    public var skipVoterCount: Int {
        rules.startMode == .hostDevice ? members.count : connectedCount
    }

    private func countsForSkip(_ member: MemberRecord) -> Bool {
        rules.startMode == .hostDevice || member.connected
    }

    /// Requests needed to skip: strictly more than `skipThreshold` of the members who may
    /// ask, never more than there are of them, at least one.
    public var skipRequestsNeeded: Int {
        let voters = skipVoterCount
        // 0.29 × 100 is 28.999999999999996 in binary, a unit in the last place below 29:
        // without the nudge, 29 of 100 (not more than 29 %) would skip. A few units in the
        // last place mend rounding alone, not a threshold's own digits (0.33333333333 × 3).
        let product = settings.skipThreshold * Double(voters)
        let needed = Int((product + 8 * product.ulp).rounded(.down)) + 1
        return max(1, min(needed, voters))
    }

    /// What `member` chose themselves: their votes on queued items and their skip request.
    public func choices(of member: UserID) -> MyChoices {
        var myVotes: [String: Int] = [:]
        for item in queue {
            if let vote = item.votes[member] { myVotes[item.id.rawValue] = vote }
        }
        return MyChoices(myVotes: myVotes, mySkipRequest: skipRequests.contains(member))
    }

    /// The whole session as `viewer` sees it.
    public func view(for viewer: UserID) -> SessionView {
        let mine = choices(of: viewer)
        return SessionView(
            session: infoView(),
            members: members.map(\.view),
            nowPlaying: nowPlayingView(),
            queue: queueView(),
            myVotes: mine.myVotes,
            skipRequests: SkipRequestsView(count: skipRequestCount, needed: skipRequestsNeeded, mine: mine.mySkipRequest),
            history: history,
            upNext: upNext.map { NowPlaying(item: itemView($0.item, reason: "up next"), epoch: $0.epoch, state: .preparing, positionMs: 0, anchorMs: $0.startAt) },
            deviceDelays: deviceDelays)
    }
}

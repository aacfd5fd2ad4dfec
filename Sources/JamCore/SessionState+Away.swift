import JamProtocol

/// Members who stay away: a member with no open socket who has sent nothing for
/// `Timing.dropAwayMs` leaves the session as if they had left, so a session people come and
/// go from for weeks neither fills up with the absent nor keeps them for ever. Only while
/// somebody else is connected: with nobody there, the unattended rules decide.
extension SessionState {
    /// Restarts or stops `user`'s away clock after something they did (or a socket change).
    mutating func noteActivity(of user: UserID, at now: Millis) {
        guard let index = members.firstIndex(where: { $0.userId == user }) else { return }
        members[index].awaySince = members[index].connected ? nil : now
    }

    /// Removes the members whose time away is up.
    mutating func dropAwayMembers(at now: Millis, into outcome: inout Outcome) {
        guard let after = timing.dropAwayMs, connectedCount > 0 else { return }
        let gone = members.filter { member in member.awaySince.map { now >= $0 + after } ?? false }
        let keeping = rules.departedSkipRequests.keepsAwayMembersRequests
        for member in gone { removeMember(member.userId, keepingSkipRequest: keeping, at: now, into: &outcome) }
    }

    /// When the first away member's time is up, while somebody is connected.
    func awayDeadline() -> Millis? {
        guard let after = timing.dropAwayMs, connectedCount > 0 else { return nil }
        return members.compactMap(\.awaySince).min().map { $0 + after }
    }

    /// Forgets `user`'s place in the fair order once they are neither a member nor have an
    /// item waiting: it only orders their items.
    mutating func forgetTurnIfGone(_ user: UserID) {
        guard member(user) == nil, !queue.contains(where: { $0.addedBy == user }) else { return }
        lastTurn[user] = nil
    }
}

import JamProtocol

extension SessionState {
    /// Why `user`, no member, may not act here: the host removed them (`forbidden`: they may
    /// not come back), or they are simply no member (`notMember`: joining lets them in). A
    /// client offers to join again on the second only.
    public func refusal(ofNonMember user: UserID) -> JamError {
        banned.contains(user) ? Self.removedByHost : Self.notAMember
    }

    static let removedByHost = JamError(.forbidden, "the host removed you from this session")
    /// What somebody who is no member hears (and a leave of theirs: there is nothing to leave).
    public static let notAMember = JamError(.notMember, "you are not a member of this session")

    mutating func join(_ user: UserID, displayName: String, at now: Millis, into outcome: inout Outcome) throws(JamError) {
        let name = try Validate.displayName(
            displayName, capBytes: rules.capsTextBytes, allowsMisleadingNames: !rules.refusesMisleadingNames)
        if banned.contains(user) { throw Self.removedByHost }
        if let index = members.firstIndex(where: { $0.userId == user }) {
            // Joining again is how a member changes their name; nothing else moves.
            guard members[index].displayName != name else { return }
            members[index].displayName = name
            let renamed = nameItems(of: user, name)
            emit(.memberUpdated(members[index].view), at: now, into: &outcome)
            if renamed { emitQueue(at: now, into: &outcome) }
            return
        }
        guard members.count < settings.maxMembers else {
            throw JamError(.sessionFull, "the session is full (\(settings.maxMembers) \(settings.maxMembers == 1 ? "member" : "members"))")
        }
        // Somebody arriving in a session its host has left (a grace period) takes over, where
        // the rules say so; the host coming back is host again.
        let takesOver = member(hostId) == nil && (user == hostId || rules.hostOfEmptySession == .firstToArrive)
        let figures = skipRequestFigures
        var record = MemberRecord(
            userId: user, displayName: name, role: takesOver ? .host : .member, connections: 0, joinedAt: now, joinOrder: joinCounter, awaySince: now)
        record.lastAddedAt = takeDepartedLastAdd(of: user, at: now)
        joinCounter += 1
        members.append(record)
        emptySince = nil
        if takesOver {
            hostId = user
            absentHostName = nil
        }
        // Back under another name: the items they left behind take it, as a rename's do.
        let renamed = nameItems(of: user, name)
        emit(.memberJoined(record.view), at: now, into: &outcome)
        if renamed { emitQueue(at: now, into: &outcome) }
        // Where the host's device plays, every member may ask to skip, connected or not.
        announceSkipRequests(movedFrom: figures, epoch: epoch, at: now, into: &outcome)
    }

    /// Gives `user`'s items `name`, so they show it after the member has left too; true when
    /// the queue must go out again: in fair ordering their items' reasons name them ("Alice's
    /// turn"), and no other event brings reasons to items that did not move.
    private mutating func nameItems(of user: UserID, _ name: String) -> Bool {
        var queued = false
        for item in queue.indices where queue[item].addedBy == user && queue[item].addedByName != name {
            queue[item].addedByName = name
            queued = true
        }
        if current?.item.addedBy == user { current?.item.addedByName = name }
        if upNext?.item.addedBy == user { upNext?.item.addedByName = name }
        return queued && settings.ordering == .fair
    }

    mutating func leave(_ user: UserID, at now: Millis, into outcome: inout Outcome) {
        removeMember(user, keepingSkipRequest: rules.departedSkipRequests.keepsLeaversRequests, at: now, into: &outcome)
        guard members.isEmpty else { return }
        if rules.emptyGraceMs != nil && (current != nil || !queue.isEmpty) {
            emptySince = now
        } else {
            end(reason: "everybody left", at: now, into: &outcome)
        }
    }

    mutating func kick(_ target: UserID, by user: UserID, at now: Millis, into outcome: inout Outcome) throws(JamError) {
        guard target != user else { throw JamError(.invalidField, "the host cannot remove themselves; leave instead") }
        guard member(target) != nil else { throw JamError(.notFound, "no member \(target) in this session") }
        banned.insert(target)
        removeMember(target, at: now, into: &outcome)
    }

    /// Removes a member, passes the host role on when needed and re-checks skip requests,
    /// unless the member's request stays (`keepingSkipRequest`: nothing is re-checked); moved
    /// skip request figures go out either way.
    mutating func removeMember(_ user: UserID, keepingSkipRequest: Bool = false, at now: Millis, into outcome: inout Outcome) {
        guard let index = members.firstIndex(where: { $0.userId == user }) else { return }
        let figures = skipRequestFigures, epochBefore = epoch
        let wasHost = members[index].role == .host, name = members[index].displayName
        keepLastAdd(of: members[index], at: now)
        members.remove(at: index)
        if !keepingSkipRequest { skipRequests.remove(user) }
        readyMembers.remove(user)
        roundTrips[user] = nil
        forgetTurnIfGone(user)
        forgetDeviceDelays(of: user)
        if wasHost, let successor = successor() {
            let successorIndex = members.firstIndex { $0.userId == successor }!
            members[successorIndex].role = .host
            hostId = successor
        } else if wasHost {
            absentHostName = name
        }
        emit(.memberLeft(MemberLeft(userId: user, hostId: hostId)), at: now, into: &outcome)
        if wasHost, let host = member(hostId) {
            emit(.memberUpdated(host.view), at: now, into: &outcome)
        }
        if !members.isEmpty {
            if !keepingSkipRequest { evaluateSkipRequests(at: now, into: &outcome) }
            announceSkipRequests(movedFrom: figures, epoch: epochBefore, at: now, into: &outcome)
            commitIfAllReady(at: now, into: &outcome)
        }
    }

    /// Who takes over as host: the creator if present, else the longest-present member;
    /// among the connected members when any is, where the rules say so
    /// (`HostSuccession.connectedFirst`); nobody where the host keeps the role while away.
    func successor() -> UserID? {
        let connectedOnly: Bool
        switch rules.hostSuccession {
        case .connectedFirst: connectedOnly = members.contains(where: \.connected)
        case .anyMember: connectedOnly = false
        case .nobody: return nil
        }
        let candidates = members.filter { !connectedOnly || $0.connected }
        if candidates.contains(where: { $0.userId == creatorId }) { return creatorId }
        return candidates.min { ($0.joinedAt, $0.joinOrder) < ($1.joinedAt, $1.joinOrder) }?.userId
    }

    mutating func setConnected(_ user: UserID, delta: Int, at now: Millis, into outcome: inout Outcome) {
        guard let index = members.firstIndex(where: { $0.userId == user }) else { return }
        let figures = skipRequestFigures, epochBefore = epoch
        let wasConnected = members[index].connected
        members[index].connections = max(0, members[index].connections + delta)
        guard members[index].connected != wasConnected else { return }
        if !members[index].connected { readyMembers.remove(user) }
        emit(.memberUpdated(members[index].view), at: now, into: &outcome)
        // Where requests outlive leaving, only a request checks them (QueueIT's backend).
        if !rules.departedSkipRequests.keepsLeaversRequests { evaluateSkipRequests(at: now, into: &outcome) }
        announceSkipRequests(movedFrom: figures, epoch: epochBefore, at: now, into: &outcome)
        if !members[index].connected { commitIfAllReady(at: now, into: &outcome) }
    }

    mutating func setRole(of target: UserID, to role: Role, by user: UserID, at now: Millis, into outcome: inout Outcome) throws(JamError) {
        guard let index = members.firstIndex(where: { $0.userId == target }) else {
            throw JamError(.notFound, "no member \(target) in this session")
        }
        if target == user { throw JamError(.invalidField, "the host cannot change their own role") }
        if role == .host {
            // Handing over: the old host becomes a co-host.
            let oldIndex = members.firstIndex { $0.userId == user }!
            members[oldIndex].role = .cohost
            members[index].role = .host
            hostId = target
            emit(.memberUpdated(members[oldIndex].view), at: now, into: &outcome)
            emit(.memberUpdated(members[index].view), at: now, into: &outcome)
            emit(.sessionUpdated(SessionUpdated(settings: settings, name: name, joinCode: joinCode)), at: now, into: &outcome)
            return
        }
        guard members[index].role != role else { return }
        members[index].role = role
        emit(.memberUpdated(members[index].view), at: now, into: &outcome)
    }
}

import JamProtocol

extension SessionState {
    /// Applies `command` from `user` at server time `now`.
    ///
    /// Returns the events to broadcast; throws a typed error and changes nothing when
    /// the command is not allowed or does not fit the state.
    public mutating func apply(_ command: Command, by user: UserID, at now: Millis) throws(JamError) -> Outcome {
        if hasEnded { throw JamError(.gone, "the session has ended") }
        var outcome = Outcome()
        if case .all(let commands) = command {
            // Applied to a copy: either every command takes effect or none does.
            var copy = self
            for step in commands {
                let partial = try copy.apply(step, by: user, at: now)
                outcome.events += partial.events
                outcome.itemId = partial.itemId ?? outcome.itemId
                outcome.score = partial.score ?? outcome.score
            }
            self = copy
            return outcome
        }
        if case .whileCurrent(let epoch, let inner) = command {
            // Who may comes first: a member's late seek is refused as forbidden, as a fresh one is.
            if let role = role(of: user) {
                try requirePermission(for: inner, role: role)
                try requireCurrent(epoch: epoch, at: now)
            }
            return try apply(inner, by: user, at: now)
        }
        if case .join(let name) = command {
            try join(user, displayName: name, at: now, into: &outcome)
            noteActivity(of: user, at: now)
            noteAttendance(at: now)
            return outcome
        }
        guard let role = role(of: user) else {
            // Leaving is done already, removed or not: clients take notMember for that.
            if case .leave = command { throw Self.notAMember }
            throw refusal(ofNonMember: user)
        }
        try requirePermission(for: command, role: role)
        switch command {
        case .join, .all, .whileCurrent:
            preconditionFailure("handled above")
        case .leave:
            leave(user, at: now, into: &outcome)
        case .connect:
            setConnected(user, delta: 1, at: now, into: &outcome)
        case .disconnect:
            setConnected(user, delta: -1, at: now, into: &outcome)
        case .add(let track, let nonce, let itemId):
            try add(track, nonce: nonce, itemId: itemId, by: user, role: role, at: now, into: &outcome)
        case .remove(let itemId):
            try remove(itemId, by: user, role: role, at: now, into: &outcome)
        case .vote(let itemId, let value):
            try vote(itemId, value: value, by: user, at: now, into: &outcome)
        case .skip:
            switch rules.startMode {
            case .djDriven: try djSkip(by: user, at: now, into: &outcome)
            case .scheduled, .hostDevice: try hostSkip(by: user, at: now, into: &outcome)
            }
        case .requestSkip:
            try requestSkip(by: user, at: now, into: &outcome)
        case .withdrawSkipRequest:
            try withdrawSkipRequest(by: user, at: now, into: &outcome)
        case .finish:
            try finish(by: user, at: now, into: &outcome)
        case .play:
            try play(at: now, into: &outcome)
        case .pause:
            try pause(at: now, into: &outcome)
        case .resume:
            try resume(at: now, into: &outcome)
        case .seek(let position):
            try seek(to: position, at: now, into: &outcome)
        case .ready(let epoch):
            ready(user, epoch: epoch, at: now, into: &outcome)
        case .syncReport(let report):
            recordRoundTrip(of: report, from: user, at: now)
            recordLead(of: report, from: user)
        case .updateSettings(let patch):
            try updateSettings(patch, at: now, into: &outcome)
        case .setRole(let target, let newRole):
            try setRole(of: target, to: newRole, by: user, at: now, into: &outcome)
        case .kick(let target):
            try kick(target, by: user, at: now, into: &outcome)
        case .setDeviceDelay(let delay):
            try setDeviceDelay(delay, by: user, role: role, at: now, into: &outcome)
        case .setJoinCode(let code):
            joinCode = code
            emit(.sessionUpdated(SessionUpdated(settings: settings, name: name, joinCode: joinCode)), at: now, into: &outcome)
        case .djPrepare(let track, let itemId):
            try djPrepare(track, itemId: itemId, by: user, at: now, into: &outcome)
        case .djTimeline(let change):
            try djTimeline(change, at: now, into: &outcome)
        case .end:
            end(reason: "the host ended the session", at: now, into: &outcome)
        }
        noteActivity(of: user, at: now)
        noteAttendance(at: now)
        return outcome
    }

    /// Whether `command` from `user` may succeed without events: a repeat of what is so already
    /// (a retried add, the same vote again) or a report that changes only what members do not
    /// see. Every other command either shows its change in events or is refused before it
    /// changes anything, so only for these must the server keep the state from before the
    /// turn to tell whether it changed anything (a kept copy makes the turn's first change to
    /// each table copy the whole table).
    public func mayEndWithoutEvents(_ command: Command, by user: UserID) -> Bool {
        switch command {
        case .add(_, let nonce, _): repeatedAdd(nonce: nonce, by: user) != nil
        case .vote(let itemId, let value): voteRepeats(on: itemId, value: value, by: user)
        case .ready, .syncReport, .connect, .disconnect, .join, .requestSkip, .withdrawSkipRequest, .setRole: true
        // All or nothing, in order: events from the first step are events of the whole.
        case .all(let commands): commands.first.map { mayEndWithoutEvents($0, by: user) } ?? true
        case .whileCurrent(_, let command): mayEndWithoutEvents(command, by: user)
        case .leave, .remove, .skip, .finish, .play, .pause, .resume, .seek, .updateSettings, .kick, .setDeviceDelay,
            .setJoinCode, .end, .djPrepare, .djTimeline:
            false
        }
    }

    /// Who may send `command` at all: checked before anything else about it, also for one that
    /// names its song (`whileCurrent`), so a member's late seek is refused as forbidden, as a
    /// fresh one is. Rules that depend on the command's data (an add to a locked queue, another
    /// member's device delay, removing someone else's item) stay with the command.
    func requirePermission(for command: Command, role: Role) throws(JamError) {
        switch command {
        case .skip: try requireHostControls(role, "skip")
        case .finish: try requireHostControls(role, "finish a track")
        case .play: try requireHostControls(role, "start playback")
        case .pause: try requireHostControls(role, "pause")
        case .resume: try requireHostControls(role, "resume")
        case .seek: try requireHostControls(role, "seek")
        case .updateSettings: try requireHostControls(role, "change settings")
        case .setRole: try requireHost(role, "change roles")
        case .kick: try requireHost(role, "remove members")
        case .setJoinCode: try requireHost(role, "change the join code")
        case .djPrepare: try requireHostControls(role, "start a track")
        case .djTimeline: try requireHostControls(role, "control playback")
        case .end: try requireHost(role, "end the session")
        case .all(let commands): for step in commands { try requirePermission(for: step, role: role) }
        case .whileCurrent(_, let inner): try requirePermission(for: inner, role: role)
        case .join, .leave, .connect, .disconnect, .add, .remove, .vote, .requestSkip, .withdrawSkipRequest, .ready, .syncReport,
            .setDeviceDelay:
            break
        }
    }

    func requireHostControls(_ role: Role, _ action: String) throws(JamError) {
        guard role.hasHostControls else { throw JamError(.forbidden, "only a host or co-host may \(action)") }
    }

    func requireHost(_ role: Role, _ action: String) throws(JamError) {
        guard role == .host else { throw JamError(.forbidden, "only the host may \(action)") }
    }

    mutating func updateSettings(_ patch: SettingsPatch, at now: Millis, into outcome: inout Outcome) throws(JamError) {
        try patch.validate()
        if let maxMembers = patch.maxMembers, maxMembers < members.count {
            throw JamError(.conflict, "maxMembers \(maxMembers) is below the \(members.count) members already in the session")
        }
        let before = queueOrder()
        let orderingBefore = settings.ordering
        let neededBefore = skipRequestsNeeded
        let cooldownBefore = settings.addCooldownSeconds
        settings = patch.applied(to: settings)
        emit(.sessionUpdated(SessionUpdated(settings: settings, name: name, joinCode: joinCode)), at: now, into: &outcome)
        if cooldownBefore > 0 && settings.addCooldownSeconds == 0 { forgetLastAdds(at: now, into: &outcome) }
        // Another ordering gives every item another reason ("2 votes", "Alice's turn") even
        // where the order stays, and no later add or vote sends the whole queue to fix them.
        if settings.ordering != orderingBefore || queueOrder() != before { emitQueue(at: now, into: &outcome) }
        if skipRequestsNeeded != neededBefore, current != nil {
            // Members see "1 of 2": a new threshold changes the second number, and may skip now.
            emit(.skipRequests(skipRequestFigures), at: now, into: &outcome)
            evaluateSkipRequests(at: now, into: &outcome)
        }
    }

    /// Ends the session: no command is accepted afterwards.
    mutating func end(reason: String, at now: Millis, into outcome: inout Outcome) {
        _ = retireCurrent(.skipped, endedAt: now)
        upNext = nil
        endedAt = now
        emit(.sessionEnded(SessionEnded(reason: reason)), at: now, into: &outcome)
    }

    mutating func trimHistory() {
        if history.count > Self.historyLimit { history.removeFirst(history.count - Self.historyLimit) }
    }
}

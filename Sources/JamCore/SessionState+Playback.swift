import JamProtocol

extension SessionState {
    /// Lead between `playPrepare` and the start: twice the slowest recent round trip of a
    /// connected member plus how far ahead the slowest device plays, at least `minLeadMs`,
    /// at most `maxLeadMs`.
    public func leadMs() -> Int64 {
        var slowest = 0.0
        for member in members where member.connected {
            if let rtt = roundTrips[member.userId] { slowest = max(slowest, rtt) }
        }
        let needed = Int64((2 * slowest).rounded(.up)) + slowestDeviceLeadMs()
        return min(timing.maxLeadMs, max(timing.minLeadMs, needed))
    }

    /// Makes `item` current, starting at `startAt`; the previous item goes to the history.
    mutating func start(_ item: ItemRecord, startAt: Millis, previous: HistoryEntry?, at now: Millis, into outcome: inout Outcome) {
        epoch += 1
        turnCounter += 1
        lastTurn[item.addedBy] = turnCounter
        forgetTurnIfGone(item.addedBy)
        skipRequests = []
        readyMembers = []
        current = CurrentItem(
            item: item, epoch: epoch, state: .preparing, positionMs: 0, anchorMs: startAt, startedAt: now,
            commitBy: max(now, startAt - commitLeadMs()))
        emit(.playPrepare(PlayPrepare(item: itemView(item, reason: "now playing"), epoch: epoch, startAt: startAt, previous: previous)), at: now, into: &outcome)
        if connectedCount > 0 {
            emit(.skipRequests(SkipRequestsUpdate(count: 0, needed: skipRequestsNeeded)), at: now, into: &outcome)
        }
    }

    /// Closes the current item into the history.
    mutating func retireCurrent(_ outcome: HistoryOutcome, endedAt: Millis, by user: UserID? = nil) -> HistoryEntry? {
        guard let current else { return nil }
        let entry = HistoryEntry(
            item: itemView(current.item, reason: outcome.rawValue), startedAt: current.startedAt, endedAt: endedAt, outcome: outcome,
            endedBy: user, endedByName: user.flatMap { member($0)?.displayName })
        history.append(entry)
        trimHistory()
        self.current = nil
        // Skip requests and ready reports belong to the item that just left.
        skipRequests = []
        readyMembers = []
        return entry
    }

    /// Ends the current item now and starts the next one (or stops); `user` is the host who
    /// skipped, nil for members' skip requests.
    mutating func skipCurrent(by user: UserID?, at now: Millis, into outcome: inout Outcome) {
        if rules.startMode == .hostDevice {
            hostDeviceNext(retiring: .skipped, by: user, at: now, into: &outcome)
            return
        }
        let previous = retireCurrent(.skipped, endedAt: now, by: user)
        let next: ItemRecord?
        if let upNext {
            next = upNext.item
            self.upNext = nil
        } else {
            next = takeNextItem(at: now)
        }
        if let next {
            start(next, startAt: now + leadMs(), previous: previous, at: now, into: &outcome)
            emitQueue(at: now, into: &outcome)
        } else {
            emit(.stopped(PlaybackStopped(epoch: epoch, previous: previous)), at: now, into: &outcome)
        }
    }

    mutating func hostSkip(by user: UserID, at now: Millis, into outcome: inout Outcome) throws(JamError) {
        guard current != nil else { throw JamError(.conflict, "nothing is playing") }
        skipCurrent(by: user, at: now, into: &outcome)
    }

    mutating func requestSkip(by user: UserID, at now: Millis, into outcome: inout Outcome) throws(JamError) {
        guard current != nil else { throw JamError(.conflict, "nothing is playing") }
        guard !skipRequests.contains(user) else {
            // Asked again: where leavers' requests stay unchecked, a departure since may have
            // left them over the threshold, which QueueIT's backend finds at any request.
            if rules.departedSkipRequests.checksRepeatedRequests { evaluateSkipRequests(at: now, into: &outcome) }
            return
        }
        skipRequests.insert(user)
        emit(.skipRequests(skipRequestFigures), at: now, into: &outcome)
        evaluateSkipRequests(at: now, into: &outcome)
    }

    /// Takes back `user`'s request to skip the current item; one not made (or made for an item
    /// no longer current) changes nothing, as a repeated request does. Fewer requests can never
    /// reach the threshold, so nothing is re-checked.
    mutating func withdrawSkipRequest(by user: UserID, at now: Millis, into outcome: inout Outcome) throws(JamError) {
        guard current != nil else { throw JamError(.conflict, "nothing is playing") }
        guard skipRequests.remove(user) != nil else { return }
        emit(.skipRequests(skipRequestFigures), at: now, into: &outcome)
    }

    /// The skip request figures members see ("1 of 2").
    var skipRequestFigures: SkipRequestsUpdate {
        SkipRequestsUpdate(count: skipRequestCount, needed: skipRequestsNeeded)
    }

    /// Who may ask to skip changed (a connection, a departure, a join where every member
    /// counts): both figures can move without a request, so they go out again when they did,
    /// unless the change skipped (the next item's start sends its own).
    mutating func announceSkipRequests(movedFrom before: SkipRequestsUpdate, epoch epochBefore: Int64, at now: Millis, into outcome: inout Outcome) {
        guard current != nil, epoch == epochBefore else { return }
        let after = skipRequestFigures
        guard after != before else { return }
        emit(.skipRequests(after), at: now, into: &outcome)
    }

    /// Skips the current item once requests from connected members reach the threshold.
    mutating func evaluateSkipRequests(at now: Millis, into outcome: inout Outcome) {
        guard current != nil, !skipRequests.isEmpty, skipVoterCount > 0 else { return }
        if skipRequestCount >= skipRequestsNeeded {
            skipCurrent(by: nil, at: now, into: &outcome)
        }
    }

    mutating func play(at now: Millis, into outcome: inout Outcome) throws(JamError) {
        if let current {
            switch current.state {
            case .paused: try resume(at: now, into: &outcome)
            case .playing, .preparing: throw JamError(.conflict, "already playing")
            }
            return
        }
        guard let head = takeNextItem(at: now) else { throw JamError(.conflict, "the queue is empty") }
        start(head, startAt: now + leadMs(), previous: nil, at: now, into: &outcome)
        emitQueue(at: now, into: &outcome)
    }

    mutating func pause(at now: Millis, into outcome: inout Outcome) throws(JamError) {
        guard let current else { throw JamError(.conflict, "nothing is playing") }
        guard current.state != .paused else { throw JamError(.conflict, "already paused") }
        hold(positionAt: now, at: now, into: &outcome)
    }

    /// Pauses the current item at the position it had at `positionAt`, announced at `now`.
    mutating func hold(positionAt instant: Millis, at now: Millis, into outcome: inout Outcome) {
        guard var current else { return }
        current.positionMs = current.position(at: instant)
        current.anchorMs = now
        current.state = .paused
        self.current = current
        emit(.pause(TimelineChange(epoch: epoch, positionMs: current.positionMs, atMs: now)), at: now, into: &outcome)
    }

    mutating func resume(at now: Millis, into outcome: inout Outcome) throws(JamError) {
        guard var current else { throw JamError(.conflict, "nothing is playing") }
        guard current.state == .paused else { throw JamError(.conflict, "not paused") }
        let at = now + leadMs()
        current.anchorMs = at
        current.state = .playing
        self.current = current
        emit(.resume(TimelineChange(epoch: epoch, positionMs: current.positionMs, atMs: at)), at: now, into: &outcome)
        reannounceUpNext(at: now, into: &outcome)
    }

    /// Refuses a host control meant for an item that is no longer current, by the epoch its
    /// sender saw: a skip, seek or pause sent again after a reconnect must not land on the next song.
    /// An item past its end on the timeline is over too, though the turn that moves on to the
    /// next (a timer) may not have run yet: skipping it then would restart the next one.
    func requireCurrent(epoch: Int64, at now: Millis) throws(JamError) {
        guard let current, current.epoch == epoch, current.endsAt.map({ now < $0 }) ?? true else {
            throw JamError(.conflict, "the song this was meant for is no longer playing; nothing changed")
        }
    }

    mutating func seek(to position: Int64, at now: Millis, into outcome: inout Outcome) throws(JamError) {
        try Validate.position(position)
        guard var current else { throw JamError(.conflict, "nothing is playing") }
        if let duration = current.item.track.durationMs, position >= duration {
            throw JamError(.invalidField, "a seek to \(position) ms is beyond the track's end (\(duration) ms)")
        }
        let at: Millis
        switch current.state {
        case .paused:
            at = now
            current.anchorMs = now
        case .playing:
            at = now + leadMs()
            current.anchorMs = at
        case .preparing:
            at = current.anchorMs
        }
        current.positionMs = position
        self.current = current
        emit(.seek(TimelineChange(epoch: epoch, positionMs: position, atMs: at)), at: now, into: &outcome)
        reannounceUpNext(at: now, into: &outcome)
    }

    /// The current item's end moved: the item prepared to follow it moves too.
    mutating func reannounceUpNext(at now: Millis, into outcome: inout Outcome) {
        guard var upNext, let endsAt = current?.endsAt else { return }
        upNext.startAt = max(endsAt, now)
        self.upNext = upNext
        emit(.playPrepare(PlayPrepare(item: itemView(upNext.item, reason: "up next"), epoch: upNext.epoch, startAt: upNext.startAt, previous: nil)), at: now, into: &outcome)
    }

    mutating func ready(_ user: UserID, epoch readyEpoch: Int64, at now: Millis, into outcome: inout Outcome) {
        guard let current, current.epoch == readyEpoch, current.state == .preparing else { return }
        readyMembers.insert(user)
        commitIfAllReady(at: now, into: &outcome)
    }

    /// Commits a preparing item as soon as every connected member's device is ready.
    mutating func commitIfAllReady(at now: Millis, into outcome: inout Outcome) {
        guard let current, current.state == .preparing else { return }
        let connected = members.filter(\.connected)
        guard !connected.isEmpty, connected.allSatisfy({ readyMembers.contains($0.userId) }) else { return }
        commit(at: now, into: &outcome)
    }

    mutating func commit(at now: Millis, into outcome: inout Outcome) {
        guard var current, current.state == .preparing else { return }
        current.state = .playing
        self.current = current
        emit(.playCommit(PlayCommit(itemId: current.item.id, epoch: current.epoch, startAt: current.anchorMs, positionMs: current.positionMs)), at: now, into: &outcome)
    }

    /// Moves the timeline to `now`: commits due starts, prepares the next item ahead of
    /// the current one's end and advances at the end. Returns the events.
    public mutating func advance(to now: Millis) -> [ServerEnvelope] {
        guard !hasEnded else { return [] }
        var outcome = Outcome()
        if let emptySince, let grace = rules.emptyGraceMs, members.isEmpty, now - emptySince >= grace {
            end(reason: "nobody came back", at: now, into: &outcome)
            return outcome.events
        }
        // The timeline first: what was due while people were still there still happens.
        if let since = unattendedSince, let pauseAfter = timing.unattendedPauseMs, connectedCount == 0 {
            advanceTimeline(to: min(now, since + pauseAfter), into: &outcome)
        }
        if applyUnattended(at: now, into: &outcome) { return outcome.events }
        dropAwayMembers(at: now, into: &outcome)
        advanceTimeline(to: now, into: &outcome)
        return outcome.events
    }

    mutating func advanceTimeline(to now: Millis, into outcome: inout Outcome) {
        switch rules.startMode {
        case .djDriven:
            djAdvance(to: now, into: &outcome)
            return
        case .hostDevice:
            // Only the host's device knows when an item ends.
            return
        case .scheduled:
            break
        }
        // Each pass moves one step; a restart after a long outage may need many.
        for _ in 0..<10_000 {
            guard let current else { return }
            switch current.state {
            case .paused:
                return
            case .preparing:
                guard now >= current.commitBy else { return }
                commit(at: now, into: &outcome)
            case .playing:
                guard let endsAt = current.endsAt else { return }
                if let upNext {
                    guard now >= upNext.startAt - commitLeadMs() else { return }
                    // The gapless hand-over: the prepared item starts exactly at the end.
                    let previous = retireCurrent(.played, endedAt: upNext.startAt)
                    self.upNext = nil
                    start(upNext.item, startAt: upNext.startAt, previous: previous, at: now, into: &outcome)
                    commit(at: now, into: &outcome)
                } else if hasNextItem, now >= endsAt - timing.prepareAheadMs, let head = takeNextItem(at: now) {
                    upNext = UpNext(item: head, epoch: epoch + 1, startAt: endsAt)
                    emit(.playPrepare(PlayPrepare(item: itemView(head, reason: "up next"), epoch: epoch + 1, startAt: endsAt, previous: nil)), at: now, into: &outcome)
                    emitQueue(at: now, into: &outcome)
                } else if now >= endsAt {
                    let previous = retireCurrent(.played, endedAt: endsAt)
                    emit(.stopped(PlaybackStopped(epoch: epoch, previous: previous)), at: now, into: &outcome)
                    return
                } else {
                    return
                }
            }
        }
    }

    /// The next server instant at which `advance(to:)` has something to do.
    public func nextDeadline() -> Millis? {
        guard !hasEnded else { return nil }
        var deadline = timelineDeadline()
        if let unattended = unattendedDeadline() { deadline = min(deadline ?? .max, unattended) }
        if let away = awayDeadline() { deadline = min(deadline ?? .max, away) }
        guard let emptySince, let grace = rules.emptyGraceMs, members.isEmpty else { return deadline }
        // Saturating: a session stored with a grace near `Int64.max` (an option no longer
        // taken) must not trap here, every time it is read back.
        let (end, overflow) = emptySince.addingReportingOverflow(grace)
        return min(deadline ?? .max, overflow ? .max : end)
    }

    func timelineDeadline() -> Millis? {
        guard let current else { return nil }
        switch rules.startMode {
        case .djDriven: return current.endsAt
        case .hostDevice: return nil
        case .scheduled: break
        }
        switch current.state {
        case .paused: return nil
        case .preparing: return current.commitBy
        case .playing:
            guard let endsAt = current.endsAt else { return nil }
            if let upNext { return upNext.startAt - commitLeadMs() }
            if hasNextItem { return endsAt - timing.prepareAheadMs }
            return endsAt
        }
    }
}

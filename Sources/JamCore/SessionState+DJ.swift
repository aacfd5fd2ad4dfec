import JamProtocol

/// DJ-driven sessions: the DJ's device decides the timeline; the server keeps it.
extension SessionState {
    mutating func djPrepare(_ track: Track, itemId: ItemID, by user: UserID, at now: Millis, into outcome: inout Outcome) throws(JamError) {
        guard rules.startMode == .djDriven else { throw JamError(.conflict, "this session schedules its own starts; use play or skip") }
        try track.validate(requireIdAndName: rules.tracksNeedIdAndName, capBytes: rules.capsTextBytes)
        if queue.contains(where: { $0.id == itemId }) || current?.item.id == itemId {
            throw JamError(.conflict, "item \(itemId) already exists")
        }
        let previous = retireCurrent(.skipped, endedAt: now, by: user)
        let item = ItemRecord(
            id: itemId, track: track, addedBy: user, addedByName: member(user)?.displayName ?? "", addedAt: now,
            addOrder: addCounter, votes: [:], scoreSince: now)
        addCounter += 1
        epoch += 1
        turnCounter += 1
        lastTurn[user] = turnCounter
        current = CurrentItem(item: item, epoch: epoch, state: .paused, positionMs: 0, anchorMs: now, startedAt: now, commitBy: now)
        outcome.itemId = itemId
        emit(.playPrepare(PlayPrepare(item: itemView(item, reason: "now playing"), epoch: epoch, startAt: now, previous: previous)), at: now, into: &outcome)
    }

    mutating func djTimeline(_ change: DJTimeline, at now: Millis, into outcome: inout Outcome) throws(JamError) {
        guard rules.startMode == .djDriven else { throw JamError(.conflict, "this session schedules its own starts") }
        guard var current else { throw JamError(.conflict, "no track is current; prepare one first") }
        let (position, at, state): (Int64, Millis, PlaybackState?) = switch change {
        case .commit(let position, let at), .resume(let position, let at): (position, at, .playing)
        case .pause(let position, let at): (position, at, .paused)
        case .seek(let position, let at): (position, at, nil)
        }
        try Validate.position(position)
        if let state { current.state = state }
        current.positionMs = position
        current.anchorMs = at
        self.current = current
        let moved = TimelineChange(epoch: epoch, positionMs: position, atMs: at)
        let event: ServerEvent = switch change {
        case .commit: .playCommit(PlayCommit(itemId: current.item.id, epoch: epoch, startAt: at, positionMs: position))
        case .pause: .pause(moved)
        case .resume: .resume(moved)
        case .seek: .seek(moved)
        }
        emit(event, at: now, into: &outcome)
    }

    /// DJ-driven skip: the queue head plays from the start now; an empty queue is refused.
    mutating func djSkip(by user: UserID, at now: Millis, into outcome: inout Outcome) throws(JamError) {
        guard let head = queueHead() else { throw JamError(.conflict, "the queue is empty") }
        queue.removeAll { $0.id == head.id }
        let previous = retireCurrent(.skipped, endedAt: now, by: user)
        playAtOnce(head, at: now, previous: previous, into: &outcome)
        emitQueue(at: now, into: &outcome)
    }

    /// Makes `item` current and playing from 0 at `at`, with no announcement ahead.
    mutating func playAtOnce(_ item: ItemRecord, at: Millis, previous: HistoryEntry?, into outcome: inout Outcome) {
        epoch += 1
        turnCounter += 1
        lastTurn[item.addedBy] = turnCounter
        forgetTurnIfGone(item.addedBy)
        skipRequests = []
        readyMembers = []
        current = CurrentItem(item: item, epoch: epoch, state: .playing, positionMs: 0, anchorMs: at, startedAt: at, commitBy: at)
        emit(.playPrepare(PlayPrepare(item: itemView(item, reason: "now playing"), epoch: epoch, startAt: at, previous: previous)), at: at, into: &outcome)
        emit(.playCommit(PlayCommit(itemId: item.id, epoch: epoch, startAt: at, positionMs: 0)), at: at, into: &outcome)
    }

    /// DJ-driven auto-advance: at the end the queue head plays; with an empty queue the
    /// last item stays current, held where the DJ's last commit, seek, pause or resume put
    /// its timeline, as PirateRadio's server keeps the position: the DJ's play then replays
    /// it from there rather than from its end.
    mutating func djAdvance(to now: Millis, into outcome: inout Outcome) {
        for _ in 0..<10_000 {
            guard var current, let endsAt = current.endsAt, now >= endsAt else { return }
            if let head = queueHead() {
                queue.removeAll { $0.id == head.id }
                let previous = retireCurrent(.played, endedAt: endsAt)
                playAtOnce(head, at: endsAt, previous: previous, into: &outcome)
                emitQueue(at: now, into: &outcome)
            } else {
                current.state = .paused
                current.anchorMs = endsAt
                self.current = current
                emit(.pause(TimelineChange(epoch: epoch, positionMs: current.positionMs, atMs: endsAt)), at: now, into: &outcome)
                return
            }
        }
    }
}

import JamProtocol

/// Host-device sessions: the host's own player plays the current item, and the server moves
/// on only when that device says the item finished, a host skips, or members ask to skip.
extension SessionState {
    /// The host's device played the current item to its end.
    mutating func finish(by user: UserID, at now: Millis, into outcome: inout Outcome) throws(JamError) {
        guard rules.startMode == .hostDevice else {
            throw JamError(.conflict, "this session's server decides when a track ends; use skip")
        }
        guard current != nil else { return }
        hostDeviceNext(retiring: .played, by: user, at: now, into: &outcome)
    }

    /// Retires the current item as `outcome` (ended by `user`, nil for skip requests) and
    /// makes the queue head current at once.
    mutating func hostDeviceNext(retiring result: HistoryOutcome, by user: UserID?, at now: Millis, into outcome: inout Outcome) {
        let previous = retireCurrent(result, endedAt: now, by: user)
        if let head = takeNextItem(at: now) {
            playAtOnce(head, at: now, previous: previous, into: &outcome)
            emitQueue(at: now, into: &outcome)
        } else {
            emit(.stopped(PlaybackStopped(epoch: epoch, previous: previous)), at: now, into: &outcome)
        }
    }

    /// A vote on the playing item (host-device sessions, whose app lets members vote on it).
    mutating func voteOnCurrent(value: Int, by user: UserID, at now: Millis, into outcome: inout Outcome) {
        guard var current else { return }
        let previous = current.item.votes[user] ?? 0
        outcome.score = current.item.score
        guard previous != value else { return }
        current.item.votes[user] = value == 0 ? nil : value
        // Every change of vote changes the score: it rose or fell.
        current.item.scoreSince = now
        current.item.scoreFell = value < previous ? true : nil
        self.current = current
        outcome.score = current.item.score
        emit(.votesUpdate(VotesUpdate(itemId: current.item.id, score: current.item.score, reason: "now playing")), at: now, into: &outcome)
    }
}

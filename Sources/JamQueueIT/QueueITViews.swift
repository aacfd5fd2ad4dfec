import JamCore
import JamProtocol

/// OpenJam's session state in QueueIT's shapes.
enum QueueITViews {
    /// A member (or a departed adder) as a QueueIT user: OpenJam's users are all full users.
    static func user(_ id: UserID, name: String?) -> QueueIT.User {
        QueueIT.User(id: id.rawValue, username: name)
    }

    /// A track; library and other tracks show as Spotify's, the source its search gives.
    static func track(_ track: Track) -> QueueIT.Track {
        let source = switch track.source {
        case .appleMusic: "apple_music"
        case .spotify, .library, .external: "spotify"
        }
        let image = track.artworkURL.flatMap { $0.hasPrefix("http://") || $0.hasPrefix("https://") ? $0 : nil }
        return QueueIT.Track(
            id: track.id, isrc: track.isrc ?? "", name: track.name, artists: track.artist, album: track.album ?? "",
            durationMs: track.durationMs ?? 0, imageURL: image, source: source)
    }

    /// A queued or playing item.
    static func song(_ item: ItemRecord, status: String, in state: SessionState) -> QueueIT.QueuedSong {
        // A session stored before the profile ordered by tiers keeps OpenJam's order: its app,
        // sorting by the same two fields, must then see every song as having risen.
        let byGain = switch state.rules.equalScores {
        case .heldLongest: true
        case .fallenFirst: !(item.scoreFell ?? false)
        }
        return QueueIT.QueuedSong(
            id: item.id.rawValue, status: status, addedAt: QueueIT.date(item.addedAt), votes: item.score, song: track(item.track),
            addedBy: user(item.addedBy, name: state.member(item.addedBy)?.displayName ?? item.addedByName),
            // Its app sorts equal scores by these two, as the profile's queue does (`fallenFirst`).
            lastEnteredTierAt: QueueIT.date(item.scoreSince), enteredTierByGain: byGain)
    }

    /// An item that has left: "played" or "skipped" (removed while playing counts as skipped).
    static func song(_ entry: HistoryEntry) -> QueueIT.QueuedSong {
        let status = switch entry.outcome {
        case .played: "played"
        case .skipped, .removed: "skipped"
        }
        return QueueIT.QueuedSong(
            id: entry.item.id.rawValue, status: status, addedAt: QueueIT.date(entry.item.addedAt), votes: entry.item.score,
            song: track(entry.item.track), addedBy: user(entry.item.addedBy.userId, name: entry.item.addedBy.displayName),
            lastEnteredTierAt: nil, enteredTierByGain: true)
    }

    /// What plays now, if anything.
    static func currentSong(_ state: SessionState) -> QueueIT.QueuedSong? {
        state.current.map { song($0.item, status: "playing", in: state) }
    }

    /// The queue as its backend lists it: every song of the session, whatever its status —
    /// the playing one, the queued ones in play order, then what played, newest first.
    static func queue(_ state: SessionState) -> [QueueIT.QueuedSong] {
        var songs: [QueueIT.QueuedSong] = []
        if let current = currentSong(state) { songs.append(current) }
        let byId = Dictionary(state.queue.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for id in state.queueOrder() {
            if let item = byId[id] { songs.append(song(item, status: "queued", in: state)) }
        }
        songs += state.history.reversed().map(song)
        return songs
    }

    /// Whether the last song to leave was skipped by members' requests: the backend's
    /// `last_skip_was_crowdsourced`, which its crowd skip sets and its host's skip or a
    /// finished song clears, and which an add that starts the first song leaves as it was.
    /// Read from the session's history (a crowd's skip is the one no member ended), so every
    /// node, and a restarted one, answers alike.
    static func lastSkipWasCrowdsourced(_ state: SessionState) -> Bool {
        guard let last = state.history.last else { return false }
        return last.outcome == .skipped && last.endedBy == nil
    }

    /// `CurrentSessionResponse` for `viewer`.
    static func current(_ state: SessionState, for viewer: UserID) -> QueueIT.CurrentSession {
        var myVotes: [String: Int] = [:]
        for item in state.queue {
            if let vote = item.votes[viewer] { myVotes[item.id.rawValue] = vote }
        }
        if let current = state.current, let vote = current.item.votes[viewer] { myVotes[current.item.id.rawValue] = vote }
        let host = state.member(state.hostId)
        return QueueIT.CurrentSession(
            session: QueueIT.Session(
                id: state.id.rawValue, joinCode: state.joinCode, createdAt: QueueIT.date(state.createdAt),
                host: user(state.hostId, name: host?.displayName ?? state.absentHostName)),
            currentSong: currentSong(state), queue: queue(state), myVotes: myVotes,
            skipRequestCount: state.skipRequestCount, participantCount: max(1, state.members.count),
            userRequestedSkip: state.skipRequests.contains(viewer), lastSkipWasCrowdsourced: lastSkipWasCrowdsourced(state))
    }
}

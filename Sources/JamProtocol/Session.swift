/// A member's role in a session.
public enum Role: String, Codable, Sendable, CaseIterable, WireEnum {
    /// The DJ: full control.
    case host
    /// Promoted by the host: host controls except changing roles, kicking and the join code.
    case cohost
    /// Adds, votes and requests skips.
    case member

    /// True for roles that hold host controls (skip, pause, lock, remove any item).
    public var hasHostControls: Bool { self != .member }
}

/// A person in a session.
public struct Member: Codable, Hashable, Sendable {
    /// The user's ID.
    public var userId: UserID
    /// The name others see.
    public var displayName: String
    /// Host, co-host or member.
    public var role: Role
    /// True while the user has at least one realtime connection open.
    public var connected: Bool
    /// When the member last added a song (absent before their first): with an add cooldown,
    /// `SessionSettings.nextAddAt(for:)` tells when they may add again.
    public var lastAddedAt: Millis?

    /// Creates a member.
    public init(userId: UserID, displayName: String, role: Role, connected: Bool, lastAddedAt: Millis? = nil) {
        self.userId = userId
        self.displayName = displayName
        self.role = role
        self.connected = connected
        self.lastAddedAt = lastAddedAt
    }
}

/// An entry of the shared queue as clients see it.
public struct QueueItem: Codable, Hashable, Sendable {
    /// The item's ID (not the track's: the same track may be queued twice when allowed).
    public var id: ItemID
    /// The song.
    public var track: Track
    /// Who added it.
    public var addedBy: Member
    /// When it was added (server time).
    public var addedAt: Millis
    /// Sum of the votes.
    public var score: Int
    /// Why the item stands where it does ("3 votes", "Alice's turn").
    public var reason: String

    /// Creates a queue item.
    public init(id: ItemID, track: Track, addedBy: Member, addedAt: Millis, score: Int, reason: String) {
        self.id = id
        self.track = track
        self.addedBy = addedBy
        self.addedAt = addedAt
        self.score = score
        self.reason = reason
    }

    /// The reason shown for an item with `score` in `votes` ordering. The server ranks
    /// with it and a client showing an optimistic score uses it too, so a score and its
    /// reason never disagree (in `fair` ordering a vote leaves the reason alone).
    public static func votesReason(score: Int) -> String {
        switch score {
        case 0: "no votes"
        case 1: "1 vote"
        case -1: "-1 vote"
        default: "\(score) votes"
        }
    }
}

/// The state of the session's playback timeline.
public enum PlaybackState: String, Codable, Sendable, CaseIterable {
    /// Announced with `playPrepare`; starts at `anchorMs`.
    case preparing
    /// Playing: `position(t) = positionMs + (t - anchorMs)`.
    case playing
    /// Held at `positionMs`.
    case paused
}

/// What is playing now, anchored to server time.
public struct NowPlaying: Codable, Hashable, Sendable {
    /// The current item.
    public var item: QueueItem
    /// Increases whenever the current item changes.
    public var epoch: Int64
    /// Preparing, playing or paused.
    public var state: PlaybackState
    /// Position at `anchorMs`.
    public var positionMs: Int64
    /// Server instant the position refers to; for `preparing`, the planned start.
    public var anchorMs: Millis

    /// Creates a timeline view.
    public init(item: QueueItem, epoch: Int64, state: PlaybackState, positionMs: Int64, anchorMs: Millis) {
        self.item = item
        self.epoch = epoch
        self.state = state
        self.positionMs = positionMs
        self.anchorMs = anchorMs
    }

    /// The playback position at server time `t`, clamped to the track (`PlaybackPosition`).
    public func position(at t: Millis) -> Int64 {
        PlaybackPosition.at(t, state: state, positionMs: positionMs, anchorMs: anchorMs, durationMs: item.track.durationMs)
    }
}

/// The session's identity and settings.
public struct SessionInfo: Codable, Hashable, Sendable {
    public var id: SessionID
    public var joinCode: String
    public var name: String
    public var hostId: UserID
    public var hostDisplayName: String
    public var settings: SessionSettings
    public var createdAt: Millis

    /// Creates session info.
    public init(id: SessionID, joinCode: String, name: String, hostId: UserID, hostDisplayName: String, settings: SessionSettings, createdAt: Millis) {
        self.id = id
        self.joinCode = joinCode
        self.name = name
        self.hostId = hostId
        self.hostDisplayName = hostDisplayName
        self.settings = settings
        self.createdAt = createdAt
    }
}

/// Skip requests for the current track, from one member's point of view.
public struct SkipRequestsView: Codable, Hashable, Sendable {
    /// Requests from connected members.
    public var count: Int
    /// How many requests skip the track.
    public var needed: Int
    /// Whether the viewing member has asked.
    public var mine: Bool

    /// Creates the view.
    public init(count: Int, needed: Int, mine: Bool) {
        self.count = count
        self.needed = needed
        self.mine = mine
    }
}

/// How a played item left the timeline.
public enum HistoryOutcome: String, Codable, Sendable, CaseIterable {
    /// It played to its end.
    case played
    /// A host skipped it or enough members asked to.
    case skipped
    /// The host removed it while it played.
    case removed
}

/// An item that has been current.
public struct HistoryEntry: Codable, Hashable, Sendable {
    public var item: QueueItem
    public var startedAt: Millis
    public var endedAt: Millis
    public var outcome: HistoryOutcome
    /// The member whose command ended it (a host's skip or finish); absent when it played
    /// to its end or members' skip requests ended it.
    public var endedBy: UserID?
    /// That member's display name then (they may have left since).
    public var endedByName: String?

    /// Creates a history entry.
    public init(item: QueueItem, startedAt: Millis, endedAt: Millis, outcome: HistoryOutcome, endedBy: UserID? = nil, endedByName: String? = nil) {
        self.item = item
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.outcome = outcome
        self.endedBy = endedBy
        self.endedByName = endedByName
    }
}

/// The whole session as one member sees it: returned by create, join and get, and sent as `stateSync`.
public struct SessionView: Codable, Hashable, Sendable {
    public var session: SessionInfo
    public var members: [Member]
    public var nowPlaying: NowPlaying?
    public var queue: [QueueItem]
    /// The viewer's own votes: item ID -> +1 or -1.
    public var myVotes: [String: Int]
    public var skipRequests: SkipRequestsView
    /// Most recent last.
    public var history: [HistoryEntry]
    /// The item announced to follow the current one without a gap (the last seconds of a track).
    public var upNext: NowPlaying?
    /// Every member device's delay that is not zero (absent from servers before delays).
    public var deviceDelays: [DeviceDelay]?

    /// Creates a view.
    public init(
        session: SessionInfo, members: [Member], nowPlaying: NowPlaying?, queue: [QueueItem], myVotes: [String: Int],
        skipRequests: SkipRequestsView, history: [HistoryEntry], upNext: NowPlaying? = nil, deviceDelays: [DeviceDelay]? = nil
    ) {
        self.session = session
        self.members = members
        self.nowPlaying = nowPlaying
        self.queue = queue
        self.myVotes = myVotes
        self.skipRequests = skipRequests
        self.history = history
        self.upNext = upNext
        self.deviceDelays = deviceDelays
    }
}

extension SessionView {
    /// Most `history` entries a session keeps and a view carries; a client keeping a view
    /// current from events drops the oldest beyond it, as the server does.
    public static let historyLimit = 100

    /// Appends `entry` to the history, dropping the oldest beyond `historyLimit`.
    public mutating func recordHistory(_ entry: HistoryEntry) {
        history.append(entry)
        if history.count > Self.historyLimit { history.removeFirst(history.count - Self.historyLimit) }
    }
}

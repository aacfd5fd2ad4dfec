/// A member's role in a session.
public enum Role: String, Codable, Sendable, CaseIterable {
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

/// How the queue is ordered.
public enum QueueOrdering: String, Codable, Sendable, CaseIterable {
    /// Highest score first; ties go to the item that held its score longest, then the earliest added.
    case votes
    /// Members take turns; within a member's items, votes decide.
    case fair
}

/// Rules a host sets for the session.
public struct SessionSettings: Codable, Hashable, Sendable {
    /// Only hosts may add.
    public var locked: Bool
    /// Fraction of connected members that skip requests must exceed.
    public var skipThreshold: Double
    /// Most members the session admits.
    public var maxMembers: Int
    /// Most items one member may have waiting in the queue.
    public var maxQueuedPerMember: Int
    /// Whether a track already queued or playing may be added again.
    public var allowDuplicates: Bool
    /// Queue ordering.
    public var ordering: QueueOrdering
    /// Continue with a library shuffle when the queue runs dry.
    public var fallback: Bool
    /// A member (hosts and co-hosts aside) may add again only this long after their last
    /// add: one add per so many seconds; 0 for no wait.
    public var addCooldownSeconds: Int

    /// Creates settings; the defaults are the ones a new session gets.
    public init(
        locked: Bool = false, skipThreshold: Double = 0.5, maxMembers: Int = 50, maxQueuedPerMember: Int = 20,
        allowDuplicates: Bool = false, ordering: QueueOrdering = .votes, fallback: Bool = false, addCooldownSeconds: Int = 0
    ) {
        self.locked = locked
        self.skipThreshold = skipThreshold
        self.maxMembers = maxMembers
        self.maxQueuedPerMember = maxQueuedPerMember
        self.allowDuplicates = allowDuplicates
        self.ordering = ordering
        self.fallback = fallback
        self.addCooldownSeconds = addCooldownSeconds
    }

    private enum CodingKeys: String, CodingKey {
        case locked, skipThreshold, maxMembers, maxQueuedPerMember, allowDuplicates, ordering, fallback, addCooldownSeconds
    }

    /// Reads settings; sessions stored before the add cooldown existed have none.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        locked = try c.decode(Bool.self, forKey: .locked)
        skipThreshold = try c.decode(Double.self, forKey: .skipThreshold)
        maxMembers = try c.decode(Int.self, forKey: .maxMembers)
        maxQueuedPerMember = try c.decode(Int.self, forKey: .maxQueuedPerMember)
        allowDuplicates = try c.decode(Bool.self, forKey: .allowDuplicates)
        ordering = try c.decode(QueueOrdering.self, forKey: .ordering)
        fallback = try c.decode(Bool.self, forKey: .fallback)
        addCooldownSeconds = try c.decodeIfPresent(Int.self, forKey: .addCooldownSeconds) ?? 0
    }

    /// When `member` may add again: nil when they may now (no cooldown, host controls, no
    /// add yet); otherwise the server instant their cooldown ends, which may have passed.
    public func nextAddAt(for member: Member) -> Millis? {
        guard addCooldownSeconds > 0, !member.role.hasHostControls, let last = member.lastAddedAt else { return nil }
        return last + Int64(addCooldownSeconds) * 1000
    }

    /// Highest `maxMembers` a host may set.
    public static let memberLimit = 1000
    /// Highest `maxQueuedPerMember` a host may set.
    public static let queueLimit = 500
    /// Longest add cooldown a host may set: an hour.
    public static let cooldownLimit = 3600
}

/// A partial settings change; absent fields stay as they are.
public struct SettingsPatch: Codable, Hashable, Sendable {
    public var locked: Bool?
    public var skipThreshold: Double?
    public var maxMembers: Int?
    public var maxQueuedPerMember: Int?
    public var allowDuplicates: Bool?
    public var ordering: QueueOrdering?
    public var fallback: Bool?
    public var addCooldownSeconds: Int?

    /// Creates a patch.
    public init(
        locked: Bool? = nil, skipThreshold: Double? = nil, maxMembers: Int? = nil, maxQueuedPerMember: Int? = nil,
        allowDuplicates: Bool? = nil, ordering: QueueOrdering? = nil, fallback: Bool? = nil, addCooldownSeconds: Int? = nil
    ) {
        self.addCooldownSeconds = addCooldownSeconds
        self.locked = locked
        self.skipThreshold = skipThreshold
        self.maxMembers = maxMembers
        self.maxQueuedPerMember = maxQueuedPerMember
        self.allowDuplicates = allowDuplicates
        self.ordering = ordering
        self.fallback = fallback
    }

    /// True when the patch changes nothing.
    public var isEmpty: Bool { self == SettingsPatch() }

    /// Checks every present field against its allowed range.
    public func validate() throws(JamError) {
        if let skipThreshold, !(skipThreshold > 0 && skipThreshold <= 1) || skipThreshold.isNaN {
            throw JamError(.invalidField, "settings.skipThreshold must be above 0 and at most 1, got \(skipThreshold)")
        }
        if let maxMembers, !(1...SessionSettings.memberLimit).contains(maxMembers) {
            throw JamError(.invalidField, "settings.maxMembers must be between 1 and \(SessionSettings.memberLimit), got \(maxMembers)")
        }
        if let maxQueuedPerMember, !(1...SessionSettings.queueLimit).contains(maxQueuedPerMember) {
            throw JamError(.invalidField, "settings.maxQueuedPerMember must be between 1 and \(SessionSettings.queueLimit), got \(maxQueuedPerMember)")
        }
        if let addCooldownSeconds, !(0...SessionSettings.cooldownLimit).contains(addCooldownSeconds) {
            throw JamError(.invalidField, "settings.addCooldownSeconds must be between 0 and \(SessionSettings.cooldownLimit), got \(addCooldownSeconds)")
        }
    }

    /// Returns `settings` with the patch applied.
    public func applied(to settings: SessionSettings) -> SessionSettings {
        var result = settings
        if let locked { result.locked = locked }
        if let skipThreshold { result.skipThreshold = skipThreshold }
        if let maxMembers { result.maxMembers = maxMembers }
        if let maxQueuedPerMember { result.maxQueuedPerMember = maxQueuedPerMember }
        if let allowDuplicates { result.allowDuplicates = allowDuplicates }
        if let ordering { result.ordering = ordering }
        if let fallback { result.fallback = fallback }
        if let addCooldownSeconds { result.addCooldownSeconds = addCooldownSeconds }
        return result
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

import JamProtocol

/// One session as pure data: members, queue, votes, timeline and the event counters.
///
/// Every change goes through `apply(_:by:at:)` or `advance(to:)`; both return the
/// events to broadcast and leave the state untouched when they throw.
public struct SessionState: Codable, Hashable, Sendable {
    public var id: SessionID
    public var joinCode: String
    public var name: String
    public var creatorId: UserID
    public var hostId: UserID
    public var createdAt: Millis
    public var settings: SessionSettings
    public var timing: Timing
    /// In join order.
    public var members: [MemberRecord]
    /// In insertion order; `rankedQueue()` gives the play order.
    public var queue: [ItemRecord]
    public var current: CurrentItem?
    public var upNext: UpNext?
    /// Oldest first, at most `historyLimit` entries.
    public var history: [HistoryEntry]
    /// Increases whenever the current item changes.
    public var epoch: Int64
    /// Increases with every broadcast event; never resets.
    public var seq: Int64
    /// Members asking to skip the current item.
    public var skipRequests: Set<UserID>
    /// Members whose device has loaded the preparing item.
    public var readyMembers: Set<UserID>
    /// Users the host kicked; they may not rejoin.
    public var banned: Set<UserID>
    /// Add nonces per user, to make a repeated add a no-op: "user \u{1F} nonce" -> item.
    public var nonces: [String: ItemID]
    /// The same keys, oldest first, to bound the table.
    public var nonceOrder: [String]
    /// Fair ordering: the turn counter at which each member's item last started.
    public var lastTurn: [UserID: Int64]
    public var turnCounter: Int64
    public var addCounter: Int64
    public var joinCounter: Int64
    /// Each member's round trip for the start lead: that of their slowest device that
    /// reported lately (`SessionRules.roundTripsPerDevice`), else their latest report.
    public var roundTrips: [UserID: Double]
    /// Set once the session is over.
    public var endedAt: Millis?
    /// Fixed by the profile that created the session.
    public var rules: SessionRules
    /// When the last member left a session that waits out its grace period.
    public var emptySince: Millis?
    /// Since when no member has been connected nor sent a command (`nil` while one is
    /// connected): pauses and then ends a session nobody attends (`Timing`).
    public var unattendedSince: Millis?
    /// Tracks the server set aside for fallback (absent in sessions stored before fallback existed).
    public var fallbackReserve: FallbackReserve?
    /// Device delays that are not zero, in the order first set (absent in sessions stored before delays).
    public var deviceDelays: [DeviceDelay]?
    /// Devices that play ahead of the timeline, as they last reported (absent when none does).
    public var deviceLeads: [DeviceLead]?
    /// Each device's latest round trip, oldest report first (absent when none, and in sessions
    /// whose rules keep one per member).
    public var deviceRoundTrips: [DeviceRoundTrip]?
    /// When members who left while an add cooldown was set last added, for as long as their
    /// cooldown runs: leaving and joining again must not start it afresh (absent when none).
    public var departedLastAdds: [UserID: Millis]?
    /// The name of a host who left and is host still, as nobody took over (`HostSuccession`,
    /// or nobody left to): views name the host while away (absent while the host is a member,
    /// and in sessions stored before it was kept).
    public var absentHostName: String?

    /// Most history entries kept.
    public static let historyLimit = SessionView.historyLimit
    /// Most remembered nonces per session.
    public static let nonceLimit = 4096

    /// A new session whose creator is its host and only member.
    public init(
        id: SessionID, joinCode: String, name: String, creator: UserID, creatorName: String,
        settings: SessionSettings = SessionSettings(), timing: Timing = Timing(), rules: SessionRules = .openJam, now: Millis
    ) {
        self.id = id
        self.joinCode = joinCode
        self.name = name
        self.creatorId = creator
        self.hostId = creator
        self.createdAt = now
        self.settings = settings
        self.timing = timing
        self.members = [MemberRecord(userId: creator, displayName: creatorName, role: .host, connections: 0, joinedAt: now, joinOrder: 0, awaySince: now)]
        self.queue = []
        self.current = nil
        self.upNext = nil
        self.history = []
        self.epoch = 0
        self.seq = 0
        self.skipRequests = []
        self.readyMembers = []
        self.banned = []
        self.nonces = [:]
        self.nonceOrder = []
        self.lastTurn = [:]
        self.turnCounter = 0
        self.addCounter = 0
        self.joinCounter = 1
        self.roundTrips = [:]
        self.endedAt = nil
        self.rules = rules
        self.emptySince = nil
        // Nobody is connected until the creator's socket opens.
        self.unattendedSince = now
    }

    // MARK: Lookups

    /// The member record of `user`, if they belong to the session.
    public func member(_ user: UserID) -> MemberRecord? {
        members.first { $0.userId == user }
    }

    /// The role of `user`, if they belong to the session.
    public func role(of user: UserID) -> Role? {
        member(user)?.role
    }

    /// Members with an open connection.
    public var connectedCount: Int {
        members.reduce(0) { $0 + ($1.connected ? 1 : 0) }
    }

    /// True once the session has ended.
    public var hasEnded: Bool { endedAt != nil }

    /// After a restart no connection is open: every member reads as disconnected.
    public mutating func resetConnections(at now: Millis) {
        for index in members.indices {
            members[index].connections = 0
            // Away since the outage began, as far as anybody can tell.
            if members[index].awaySince == nil { members[index].awaySince = unattendedSince ?? now }
        }
        readyMembers = []
        // The outage counts as unattended time from its start, if that is known.
        if unattendedSince == nil { unattendedSince = now }
    }

    // MARK: Events

    /// Appends `event` with the next `seq` and the current epoch.
    mutating func emit(_ event: ServerEvent, at now: Millis, into outcome: inout Outcome) {
        seq += 1
        outcome.events.append(ServerEnvelope(event: event, epoch: epoch, seq: seq, timestamp: now))
    }

    /// Broadcasts the queue in its current order.
    mutating func emitQueue(at now: Millis, into outcome: inout Outcome) {
        emit(.queueUpdate(QueueUpdate(queue: queueView())), at: now, into: &outcome)
    }

    /// Tells members the item at `index` of `queue` joined it. Ordered by votes, only the new
    /// item has a new place, so it goes alone with that place; in fair ordering it can shift
    /// members' turns and other items' reasons, so the whole queue goes.
    mutating func emitQueued(_ index: Int, at now: Millis, into outcome: inout Outcome) {
        switch settings.ordering {
        case .votes:
            let item = queue[index]
            let added = QueueItemAdded(item: itemView(item, reason: QueueItem.votesReason(score: item.score)), index: QueueRanking.votesRank(of: index, in: queue, equalScores: rules.equalScores))
            emit(.queueItemAdded(added), at: now, into: &outcome)
        case .fair:
            emitQueue(at: now, into: &outcome)
        }
    }

    /// Tells members `itemId` left the queue, as `emitQueued` tells of an arrival.
    mutating func emitUnqueued(_ itemId: ItemID, at now: Millis, into outcome: inout Outcome) {
        switch settings.ordering {
        case .votes: emit(.queueItemRemoved(QueueItemRemoved(itemId: itemId)), at: now, into: &outcome)
        case .fair: emitQueue(at: now, into: &outcome)
        }
    }
}

/// A member left; `hostId` names the host after succession.
public struct MemberLeft: Codable, Hashable, Sendable {
    public var userId: UserID
    public var hostId: UserID
    /// Creates the payload.
    public init(userId: UserID, hostId: UserID) {
        self.userId = userId
        self.hostId = hostId
    }
}

/// The queue in its new order.
public struct QueueUpdate: Codable, Hashable, Sendable {
    public var queue: [QueueItem]
    /// Creates the payload.
    public init(queue: [QueueItem]) { self.queue = queue }
}

/// An item joined the queue at `index` of its play order; every other item keeps its order.
/// Sent instead of a `queueUpdate` when the queue is ordered by votes.
public struct QueueItemAdded: Codable, Hashable, Sendable {
    public var item: QueueItem
    public var index: Int
    /// Creates the payload.
    public init(item: QueueItem, index: Int) {
        self.item = item
        self.index = index
    }
}

/// An item was taken off the queue; every other item keeps its order. Sent instead of a
/// `queueUpdate` when the queue is ordered by votes.
public struct QueueItemRemoved: Codable, Hashable, Sendable {
    public var itemId: ItemID
    /// Creates the payload.
    public init(itemId: ItemID) { self.itemId = itemId }
}

/// An item's score changed, with the reason that goes with the new score. In `votes` ordering
/// a vote moves only its own item, so the move travels here as `movedTo` and no `queueUpdate`
/// follows; in `fair` ordering a vote that changes the order is followed by a `queueUpdate`.
public struct VotesUpdate: Codable, Hashable, Sendable {
    public var itemId: ItemID
    public var score: Int
    /// The item's new reason: "2 votes", or in `fair` ordering the member's turn, which a vote
    /// can move to another round.
    public var reason: String
    /// The item's new index in the queue's play order when the vote moved it; every other
    /// item keeps its order. Absent when the item stayed where it was.
    public var movedTo: Int?
    /// Creates the payload.
    public init(itemId: ItemID, score: Int, reason: String, movedTo: Int? = nil) {
        self.itemId = itemId
        self.score = score
        self.reason = reason
        self.movedTo = movedTo
    }
}

/// A new current item: load it now, start it at `startAt` (server time).
public struct PlayPrepare: Codable, Hashable, Sendable {
    public var item: QueueItem
    public var epoch: Int64
    public var startAt: Millis
    /// The item that was current before, as it went into the history.
    public var previous: HistoryEntry?
    /// Creates the payload.
    public init(item: QueueItem, epoch: Int64, startAt: Millis, previous: HistoryEntry?) {
        self.item = item
        self.epoch = epoch
        self.startAt = startAt
        self.previous = previous
    }
}

/// The prepared item starts (or started) at `startAt` from `positionMs`.
public struct PlayCommit: Codable, Hashable, Sendable {
    public var itemId: ItemID
    public var epoch: Int64
    public var startAt: Millis
    public var positionMs: Int64
    /// Creates the payload.
    public init(itemId: ItemID, epoch: Int64, startAt: Millis, positionMs: Int64) {
        self.itemId = itemId
        self.epoch = epoch
        self.startAt = startAt
        self.positionMs = positionMs
    }
}

/// A pause, resume or seek: from server instant `atMs` the position is `positionMs`.
public struct TimelineChange: Codable, Hashable, Sendable {
    public var epoch: Int64
    public var positionMs: Int64
    public var atMs: Millis
    /// Creates the payload.
    public init(epoch: Int64, positionMs: Int64, atMs: Millis) {
        self.epoch = epoch
        self.positionMs = positionMs
        self.atMs = atMs
    }
}

/// Playback stopped: the queue ran dry or the current item was removed.
public struct PlaybackStopped: Codable, Hashable, Sendable {
    public var epoch: Int64
    public var previous: HistoryEntry?
    /// Creates the payload.
    public init(epoch: Int64, previous: HistoryEntry?) {
        self.epoch = epoch
        self.previous = previous
    }
}

/// Skip requests for the current track.
public struct SkipRequestsUpdate: Codable, Hashable, Sendable {
    public var count: Int
    public var needed: Int
    /// Creates the payload.
    public init(count: Int, needed: Int) {
        self.count = count
        self.needed = needed
    }
}

/// The receiving member's own votes and skip request, for their other devices: the broadcasts
/// say how many voted or asked, not who, so a vote from a phone would otherwise show on the
/// same member's laptop only with the next whole state.
public struct MyChoices: Codable, Hashable, Sendable {
    /// Item id → +1 or −1 for each queued item the member voted on (`SessionView.myVotes`).
    public var myVotes: [String: Int]
    /// Whether the member asks to skip the current item (`SkipRequestsView.mine`).
    public var mySkipRequest: Bool
    /// Creates the payload.
    public init(myVotes: [String: Int], mySkipRequest: Bool) {
        self.myVotes = myVotes
        self.mySkipRequest = mySkipRequest
    }
}

/// Settings, name or join code changed.
public struct SessionUpdated: Codable, Hashable, Sendable {
    public var settings: SessionSettings
    public var name: String
    public var joinCode: String
    /// Creates the payload.
    public init(settings: SessionSettings, name: String, joinCode: String) {
        self.settings = settings
        self.name = name
        self.joinCode = joinCode
    }
}

/// Answer to `ping`: the four timestamps of an NTP-style exchange are
/// `clientSendTime`, `serverReceiveTime`, `serverSendTime` and the client's receive time.
public struct Pong: Codable, Hashable, Sendable {
    public var clientSendTime: Double
    public var serverReceiveTime: Double
    public var serverSendTime: Double
    /// Creates the payload.
    public init(clientSendTime: Double, serverReceiveTime: Double, serverSendTime: Double) {
        self.clientSendTime = clientSendTime
        self.serverReceiveTime = serverReceiveTime
        self.serverSendTime = serverSendTime
    }
}

/// A command with an `id` took effect (and is stored).
public struct Ack: Codable, Hashable, Sendable {
    public var id: String
    /// The item an `addToQueue` created (or had created, for a repeated nonce).
    public var itemId: ItemID?
    /// The item's score after a `vote`.
    public var score: Int?
    /// Creates the payload.
    public init(id: String, itemId: ItemID? = nil, score: Int? = nil) {
        self.id = id
        self.itemId = itemId
        self.score = score
    }
}

/// A command failed, or a frame could not be understood.
public struct ErrorEvent: Codable, Hashable, Sendable {
    /// The failed command's `id`, when it had one.
    public var id: String?
    public var code: ErrorCode
    public var message: String
    /// For `rateLimited`: when the same kind of command can pass again, ms from now.
    public var retryAfterMs: Int64?
    /// Creates the payload.
    public init(id: String?, code: ErrorCode, message: String, retryAfterMs: Int64? = nil) {
        self.id = id
        self.code = code
        self.message = message
        self.retryAfterMs = retryAfterMs
    }
}

/// The session is over; the socket closes after this.
public struct SessionEnded: Codable, Hashable, Sendable {
    public var reason: String
    /// Creates the payload.
    public init(reason: String) { self.reason = reason }
}

/// Every event the server sends on the realtime socket.
public enum ServerEvent: Hashable, Sendable {
    case stateSync(SessionView)
    case memberJoined(Member)
    case memberLeft(MemberLeft)
    case memberUpdated(Member)
    case queueUpdate(QueueUpdate)
    case queueItemAdded(QueueItemAdded)
    case queueItemRemoved(QueueItemRemoved)
    case votesUpdate(VotesUpdate)
    case playPrepare(PlayPrepare)
    case playCommit(PlayCommit)
    case pause(TimelineChange)
    case resume(TimelineChange)
    case seek(TimelineChange)
    case stopped(PlaybackStopped)
    case skipRequests(SkipRequestsUpdate)
    case sessionUpdated(SessionUpdated)
    case pong(Pong)
    case ack(Ack)
    case error(ErrorEvent)
    case sessionEnded(SessionEnded)
    case deviceDelay(DeviceDelay)
    case syncStatus(SyncStatusUpdate)
    case calibration(CalibrationPlan)
    case calibrationResult(CalibrationOutcome)
    case resync(Resync)
    case myChoices(MyChoices)

    /// The `type` string of the envelope.
    public var type: ServerEventType {
        switch self {
        case .stateSync: .stateSync
        case .memberJoined: .memberJoined
        case .memberLeft: .memberLeft
        case .memberUpdated: .memberUpdated
        case .queueUpdate: .queueUpdate
        case .queueItemAdded: .queueItemAdded
        case .queueItemRemoved: .queueItemRemoved
        case .votesUpdate: .votesUpdate
        case .playPrepare: .playPrepare
        case .playCommit: .playCommit
        case .pause: .pause
        case .resume: .resume
        case .seek: .seek
        case .stopped: .stopped
        case .skipRequests: .skipRequests
        case .sessionUpdated: .sessionUpdated
        case .pong: .pong
        case .ack: .ack
        case .error: .error
        case .sessionEnded: .sessionEnded
        case .deviceDelay: .deviceDelay
        case .syncStatus: .syncStatus
        case .calibration: .calibration
        case .calibrationResult: .calibrationResult
        case .resync: .resync
        case .myChoices: .myChoices
        }
    }
}

/// The `type` of a server envelope.
public enum ServerEventType: String, Codable, Sendable, CaseIterable {
    case stateSync, memberJoined, memberLeft, memberUpdated, queueUpdate, queueItemAdded, queueItemRemoved, votesUpdate, playPrepare, playCommit
    case pause, resume, seek, stopped, skipRequests, sessionUpdated, pong, ack, error, sessionEnded
    case deviceDelay, syncStatus, calibration, calibrationResult, resync, myChoices

    /// Whether a frame of this type is a broadcast event that takes the session's next `seq`.
    /// The others carry the current `seq` without advancing it: `stateSync` (a whole view, which
    /// sets a follower's `seq`), the replies to one connection, the passing device-sync
    /// frames, and a member's own `myChoices` (sent to that member's devices only). Followers skip them in their gap and duplicate checks; the web client's
    /// `DIRECT_EVENTS` is the same list less `stateSync`, checked by a mirror test.
    public var advancesSeq: Bool {
        switch self {
        case .memberJoined, .memberLeft, .memberUpdated, .queueUpdate, .queueItemAdded, .queueItemRemoved, .votesUpdate, .playPrepare,
            .playCommit, .pause, .resume, .seek, .stopped, .skipRequests, .sessionUpdated, .sessionEnded, .deviceDelay:
            true
        case .stateSync, .pong, .ack, .error, .syncStatus, .calibration, .calibrationResult, .resync, .myChoices:
            false
        }
    }
}

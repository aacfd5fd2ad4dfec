/// `hello {lastSeq?}`: resume from the last `seq` the client applied.
public struct Hello: Codable, Hashable, Sendable {
    public var lastSeq: Int64?
    /// Creates the payload.
    public init(lastSeq: Int64?) { self.lastSeq = lastSeq }
}

/// `ping {clientSendTime}`: the client's send instant in its own clock (ms, fractional allowed).
public struct Ping: Codable, Hashable, Sendable {
    public var clientSendTime: Double
    /// Creates the payload.
    public init(clientSendTime: Double) { self.clientSendTime = clientSendTime }
}

/// `addToQueue {track, nonce}`; the same nonce twice is one add.
public struct AddToQueue: Codable, Hashable, Sendable {
    public var track: Track
    public var nonce: String
    /// Creates the payload.
    public init(track: Track, nonce: String) {
        self.track = track
        self.nonce = nonce
    }
}

/// Names a queue item.
public struct ItemRef: Codable, Hashable, Sendable {
    public var itemId: ItemID
    /// Creates the payload.
    public init(itemId: ItemID) { self.itemId = itemId }
}

/// `vote {itemId, value}` with value -1, 0 (clear) or +1.
public struct Vote: Codable, Hashable, Sendable {
    public var itemId: ItemID
    public var value: Int
    /// Creates the payload.
    public init(itemId: ItemID, value: Int) {
        self.itemId = itemId
        self.value = value
    }
}

/// `seek {positionMs}`.
public struct Seek: Codable, Hashable, Sendable {
    public var positionMs: Int64
    /// Creates the payload.
    public init(positionMs: Int64) { self.positionMs = positionMs }
}

/// `ready {epoch}`: the device has loaded the prepared item.
public struct Ready: Codable, Hashable, Sendable {
    public var epoch: Int64
    /// Creates the payload.
    public init(epoch: Int64) { self.epoch = epoch }
}

/// `syncReport`: how well a device follows the timeline.
public struct SyncReport: Codable, Hashable, Sendable {
    public var epoch: Int64
    public var offsetMs: Double
    public var errorMs: Double
    public var driftMs: Double
    /// Creates the payload.
    public init(epoch: Int64, offsetMs: Double, errorMs: Double, driftMs: Double) {
        self.epoch = epoch
        self.offsetMs = offsetMs
        self.errorMs = errorMs
        self.driftMs = driftMs
    }
}

/// Names a member.
public struct UserRef: Codable, Hashable, Sendable {
    public var userId: UserID
    /// Creates the payload.
    public init(userId: UserID) { self.userId = userId }
}

/// `promote {userId, role?}`: make a member co-host (default) or back to member.
public struct Promote: Codable, Hashable, Sendable {
    public var userId: UserID
    public var role: Role?
    /// Creates the payload.
    public init(userId: UserID, role: Role? = nil) {
        self.userId = userId
        self.role = role
    }
}

/// Every command a client may send on the realtime socket.
public enum ClientCommand: Hashable, Sendable {
    case hello(Hello)
    case ping(Ping)
    case addToQueue(AddToQueue)
    case removeFromQueue(ItemRef)
    case vote(Vote)
    case skip
    case requestSkip
    case play
    case pause
    case resume
    case seek(Seek)
    case ready(Ready)
    case syncReport(SyncReport)
    case updateSettings(SettingsPatch)
    case promote(Promote)
    case kick(UserRef)
    case leave

    /// The `type` string of the frame.
    public var type: ClientCommandType {
        switch self {
        case .hello: .hello
        case .ping: .ping
        case .addToQueue: .addToQueue
        case .removeFromQueue: .removeFromQueue
        case .vote: .vote
        case .skip: .skip
        case .requestSkip: .requestSkip
        case .play: .play
        case .pause: .pause
        case .resume: .resume
        case .seek: .seek
        case .ready: .ready
        case .syncReport: .syncReport
        case .updateSettings: .updateSettings
        case .promote: .promote
        case .kick: .kick
        case .leave: .leave
        }
    }

    /// Checks value ranges a well-formed frame may still violate.
    public func validate() throws(JamError) {
        switch self {
        case .hello(let h):
            if let s = h.lastSeq, s < 0 { throw JamError(.invalidField, "lastSeq must not be negative, got \(s)") }
        case .ping(let p):
            if !p.clientSendTime.isFinite { throw JamError(.invalidField, "clientSendTime must be a finite number") }
        case .addToQueue(let a):
            try a.track.validate()
            try Validate.nonce(a.nonce)
        case .vote(let v): try Validate.vote(v.value)
        case .seek(let s): try Validate.position(s.positionMs)
        case .ready(let r):
            if r.epoch < 0 { throw JamError(.invalidField, "epoch must not be negative, got \(r.epoch)") }
        case .syncReport(let r):
            if ![r.offsetMs, r.errorMs, r.driftMs].allSatisfy(\.isFinite) {
                throw JamError(.invalidField, "syncReport values must be finite numbers")
            }
            if r.errorMs < 0 { throw JamError(.invalidField, "errorMs must not be negative") }
        case .updateSettings(let patch):
            if patch.isEmpty { throw JamError(.invalidField, "updateSettings must change at least one setting") }
            try patch.validate()
        case .removeFromQueue, .skip, .requestSkip, .play, .pause, .resume, .promote, .kick, .leave:
            break
        }
    }
}

/// The `type` of a client frame.
public enum ClientCommandType: String, Codable, Sendable, CaseIterable {
    case hello, ping, addToQueue, removeFromQueue, vote, skip, requestSkip, play, pause, resume, seek
    case ready, syncReport, updateSettings, promote, kick, leave
}
